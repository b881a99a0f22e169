"""The `scoregate` command: thin Typer commands over the library, one error handler, distinct exit codes."""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console
from rich.markup import escape

from scoregate.cli import (
    cache_cmd,
    calibrate_cmd,
    compare_cmd,
    extraction_cmd,
    hardcases_cmd,
    langfuse_cmd,
    leaderboard_cmd,
    model_cmd,
    promote_cmd,
    run_cmd,
    runs_cmd,
    watch_cmd,
)
from scoregate.errors import ExitCode, ScoregateError

app = typer.Typer(
    name="scoregate",
    help="Decide, with evidence, whether a new prompt or model beats production.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("validate")(run_cmd.validate)
app.command("run")(run_cmd.run)
app.command("mlflow-sync")(run_cmd.mlflow_sync)
app.command("rank")(run_cmd.rank)
app.command("calibrate")(calibrate_cmd.calibrate)
app.command("compare")(compare_cmd.compare)
app.command("leaderboard")(leaderboard_cmd.leaderboard)
app.command("connection-test")(extraction_cmd.connection_test)
app.command("langfuse-sync")(promote_cmd.langfuse_sync)
app.command("promote")(promote_cmd.promote_command)
app.command("promotions")(promote_cmd.promotions_command)
app.add_typer(hardcases_cmd.app, name="hardcases")
app.add_typer(extraction_cmd.app, name="extraction")
runs_cmd.app.command("watch")(watch_cmd.watch)
app.add_typer(runs_cmd.app, name="runs")
app.add_typer(model_cmd.app, name="model")
app.add_typer(cache_cmd.app, name="cache")
app.add_typer(langfuse_cmd.langfuse_app, name="langfuse")
app.add_typer(langfuse_cmd.datasets_app, name="datasets")
app.add_typer(langfuse_cmd.prompts_app, name="prompts")
app.add_typer(langfuse_cmd.scores_app, name="scores")


def _debug() -> bool:
    return os.environ.get("SCOREGATE_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def main() -> None:
    """Run the CLI; print user errors without a traceback (SCOREGATE_DEBUG=1 re-raises)."""
    err = Console(stderr=True)
    try:
        code = app(standalone_mode=False)
    except ScoregateError as exc:
        if _debug():
            raise
        err.print(f"[bold red]error:[/] {escape(exc.render())}", highlight=False, markup=True)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        sys.exit(int(ExitCode.INTERRUPTED))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(int(ExitCode.INTERRUPTED))
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        import click

        # Newer typer vendors click: its usage errors are `typer.TyperException`s, not `click.ClickException`s.
        usage_errors = (click.ClickException, getattr(typer, "TyperException", click.ClickException))
        show = getattr(exc, "show", None)
        if isinstance(exc, usage_errors) and callable(show):
            show()
            sys.exit(int(getattr(exc, "exit_code", ExitCode.USAGE)))
        raise
    if isinstance(code, int) and code:  # without standalone mode, typer returns a `typer.Exit` code instead
        sys.exit(code)
