"""The command reference of the docs site, generated from the `scoregate` CLI itself so it cannot drift.

An MkDocs hook (`hooks:` in mkdocs.yml): a page holding the marker below gets, in its place, one section
per command — its help, usage, arguments and options — read from the click tree that `scoregate --help`
prints. The tree is walked with `list_commands` and `get_command`, as the help does, so every command of
the lazy group (`scoregate.cli.lazy_group`) is built and documented whichever were built before; reading
`Group.commands`, as mkdocs-click does, lists only those.

`python tools/cli_reference.py` prints the same Markdown.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MARKER = "<!-- scoregate-cli-reference -->"
PROGRAM = "scoregate"
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
_MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]|#])")


@dataclass(frozen=True)
class CommandDoc:
    """One command of the tree: its words after `scoregate`, the click command and its context."""

    path: tuple[str, ...]
    command: Any
    ctx: Any

    @property
    def title(self) -> str:
        """`scoregate runs show`: the words a user types."""
        return " ".join((PROGRAM, *self.path))

    @property
    def anchor(self) -> str:
        """The heading's id: `scoregate-runs-show`."""
        return "-".join((PROGRAM, *self.path))


def root_command() -> Any:
    """The click command `scoregate` runs (a fresh one: no subcommand built yet)."""
    import typer

    from scoregate.cli import app

    return typer.main.get_command(app)


def walk(command: Any, path: tuple[str, ...] = (), parent: Any = None) -> Iterator[CommandDoc]:
    """Every visible command under `command`, depth first, in the order `--help` lists them."""
    ctx = command.context_class(command, info_name=path[-1] if path else PROGRAM, parent=parent)
    yield CommandDoc(path, command, ctx)
    if not hasattr(command, "list_commands"):
        return
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            yield from walk(sub, (*path, name), ctx)


def escape(text: str) -> str:
    """Help text as Markdown that shows it as written: code spans kept, HTML and emphasis characters escaped."""
    parts = _CODE_SPAN.split(text)
    return "".join(
        part if index % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(part, quote=False))
        for index, part in enumerate(parts)
    )


def _paragraphs(text: str) -> list[str]:
    """A help text's paragraphs, each on one line (click's `\\b` no-rewrap marker dropped)."""
    blocks = re.split(r"\n\s*\n", text.strip())
    return [" ".join(line.strip() for line in block.splitlines() if line.strip() != "\b") for block in blocks]


def _usage(doc: CommandDoc) -> str:
    pieces = " ".join(doc.command.collect_usage_pieces(doc.ctx))
    return f"{doc.ctx.command_path} {pieces}".rstrip()


def _param_rows(doc: CommandDoc, kind: str) -> list[str]:
    rows = []
    for param in doc.command.get_params(doc.ctx):
        if param.param_type_name != kind or getattr(param, "hidden", False) or "--help" in param.opts:
            continue
        record = param.get_help_record(doc.ctx)
        if record is None:
            continue
        names, help_text = record
        rows.append(f"| `{names}` | {escape(' '.join(help_text.split()))} |")
    return rows


def _subcommand_rows(doc: CommandDoc, children: list[CommandDoc]) -> list[str]:
    rows = []
    for child in children:
        short = child.command.get_short_help_str(limit=200)
        rows.append(f"| [`{child.path[-1]}`](#{child.anchor}) | {escape(short)} |")
    return rows


def section(doc: CommandDoc, children: list[CommandDoc]) -> Iterator[str]:
    """The Markdown of one command: heading, help, usage, arguments, options, subcommands."""
    level = "#" * min(2 + max(len(doc.path) - 1, 0), 6)
    yield f"{level} {doc.title} {{ #{doc.anchor} }}"
    yield ""
    for paragraph in _paragraphs(doc.command.help or doc.command.short_help or ""):
        yield escape(paragraph)
        yield ""
    yield "```text"
    yield f"Usage: {_usage(doc)}"
    yield "```"
    yield ""
    for title, rows in (
        ("Arguments", _param_rows(doc, "argument")),
        ("Options", _param_rows(doc, "option")),
        ("Commands", _subcommand_rows(doc, children)),
    ):
        if rows:
            yield f"**{title}**"
            yield ""
            yield f"| {title[:-1].lower()} | what it does |"
            yield "| --- | --- |"
            yield from rows
            yield ""


def reference() -> str:
    """The whole command reference as Markdown."""
    docs = list(walk(root_command()))
    lines: list[str] = []
    for doc in docs:
        children = [d for d in docs if len(d.path) == len(doc.path) + 1 and d.path[:-1] == doc.path]
        lines += section(doc, children)
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: put the generated reference where a page holds the marker."""
    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown


if __name__ == "__main__":
    print(reference())
