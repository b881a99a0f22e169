"""A Typer group that imports and builds a command only when it runs, so `scoregate --help` starts fast.

The root help, typo suggestions and shell completion of command names read a registry of names and
one-line helps; a command's module is imported, and its click command built, on first use only.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from difflib import get_close_matches
from typing import ClassVar, NamedTuple

import typer
from typer._click import Command, Context, HelpFormatter
from typer._click.exceptions import UsageError
from typer._click.shell_completion import CompletionItem
from typer._click.utils import make_default_short_help
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

COMPLETION_HELP_WIDTH = 45  # click's default width for a command's help beside a completed name


class LazyCommand(NamedTuple):
    """Where a command lives (a function or a `typer.Typer` sub-app) and its one-line help."""

    module: str
    attribute: str
    help: str


class LazyTyperGroup(TyperGroup):
    """A `TyperGroup` whose `lazy_commands` load on first use; subclass it and set `lazy_commands`."""

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}
    pretty_exceptions_short: ClassVar[bool] = True  # as the root `typer.Typer` sets it (typer's default)

    def load_command(self, name: str) -> Command:
        """Import the command `name` and build it as the root Typer would have (same markup mode)."""
        entry = self.lazy_commands[name]
        target = getattr(importlib.import_module(entry.module), entry.attribute)
        if isinstance(target, typer.Typer):
            return get_group_from_info(
                TyperInfo(target, name=name),
                pretty_exceptions_short=self.pretty_exceptions_short,
                rich_markup_mode=self.rich_markup_mode,
                suggest_commands=self.suggest_commands,
            )
        return get_command_from_info(
            CommandInfo(name=name, callback=target),
            pretty_exceptions_short=self.pretty_exceptions_short,
            rich_markup_mode=self.rich_markup_mode,
        )

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.commands[cmd_name] = self.load_command(cmd_name)
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: Context) -> list[str]:
        return [*self.lazy_commands, *(name for name in self.commands if name not in self.lazy_commands)]

    def _short_help(self, ctx: Context, name: str, limit: int) -> str | None:
        """The registry's help for a command not built yet, else the command's own; None when it is hidden."""
        if name in self.lazy_commands and name not in self.commands:
            return make_default_short_help(self.lazy_commands[name].help, limit)
        command = self.get_command(ctx, name)
        return None if command is None or command.hidden else command.get_short_help_str(limit)

    def _visible(self, ctx: Context) -> list[str]:
        names = self.list_commands(ctx)
        return [name for name in names if self._short_help(ctx, name, COMPLETION_HELP_WIDTH) is not None]

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        names = self._visible(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)  # as TyperGroup.format_commands
        rows = [(name, self._short_help(ctx, name, limit) or "") for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            # TyperGroup suggests among the commands built so far (usually none): suggest among all of them.
            if self.suggest_commands and args and (matches := get_close_matches(args[0], self.list_commands(ctx))):
                message = exc.message.split(" Did you mean ")[0].rstrip(".")
                exc.message = f"{message}. Did you mean {', '.join(repr(match) for match in matches)}?"
            raise

    def shell_complete(self, ctx: Context, incomplete: str) -> list[CompletionItem]:
        results = [
            CompletionItem(name, help=self._short_help(ctx, name, COMPLETION_HELP_WIDTH))
            for name in self._visible(ctx)
            if name.startswith(incomplete)
        ]
        results.extend(Command.shell_complete(self, ctx, incomplete))  # options, as TyperGroup adds them
        return results
