"""The `scoregate` command: thin Typer commands over the library, one error handler, distinct exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from scoregate.cli import (
    cache_cmd,
    calibrate_cmd,
    compare_cmd,
    diff_cmd,
    extraction_cmd,
    gold_cmd,
    hardcases_cmd,
    invalidate_cmd,
    langfuse_cmd,
    leaderboard_cmd,
    model_cmd,
    promote_cmd,
    report_cmd,
    run_cmd,
    runs_cmd,
    watch_cmd,
)
from scoregate.cli.options import PROJECT_HELP, set_global_project
from scoregate.errors import ExitCode, ScoregateError
from scoregate.redaction import redact

app = typer.Typer(
    name="scoregate",
    help="Decide, with evidence, whether a new prompt or model beats production.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from scoregate import __version__

        typer.echo(f"scoregate {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(
    project: Annotated[Path | None, typer.Option("--project", "-C", help=PROJECT_HELP)] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Decide, with evidence, whether a new prompt or model beats production."""
    set_global_project(project)


app.command("validate")(run_cmd.validate)
app.command("run")(run_cmd.run)
app.command("mlflow-sync")(run_cmd.mlflow_sync)
app.command("rank")(run_cmd.rank)
app.command("calibrate")(calibrate_cmd.calibrate)
app.command("compare")(compare_cmd.compare)
app.command("diff")(diff_cmd.diff)
app.command("report")(report_cmd.report)
app.command("leaderboard")(leaderboard_cmd.leaderboard)
app.command("connection-test")(extraction_cmd.connection_test)
app.command("langfuse-sync")(promote_cmd.langfuse_sync)
app.command("promote")(promote_cmd.promote_command)
app.command("promotions")(promote_cmd.promotions_command)
app.add_typer(hardcases_cmd.app, name="hardcases")
app.add_typer(extraction_cmd.app, name="extraction")
app.add_typer(gold_cmd.app, name="gold")
runs_cmd.app.command("invalidate")(invalidate_cmd.invalidate)
runs_cmd.app.command("watch")(watch_cmd.watch)
app.add_typer(runs_cmd.app, name="runs")
app.add_typer(model_cmd.app, name="model")
app.add_typer(cache_cmd.app, name="cache")
app.add_typer(langfuse_cmd.langfuse_app, name="langfuse")
app.add_typer(langfuse_cmd.datasets_app, name="datasets")
app.add_typer(langfuse_cmd.prompts_app, name="prompts")
app.add_typer(langfuse_cmd.scores_app, name="scores")
app.add_typer(langfuse_cmd.dashboards_app, name="dashboards")
app.add_typer(langfuse_cmd.annotate_app, name="annotate")


def _debug() -> bool:
    return os.environ.get("SCOREGATE_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def main() -> None:
    """Run the CLI; print user errors without a traceback (SCOREGATE_DEBUG=1 re-raises)."""
    from scoregate.cli.console import escape, lazy_console

    err = lazy_console(stderr=True)
    try:
        code = app(standalone_mode=False)
    except ScoregateError as exc:
        if _debug():
            raise
        err.print(f"[bold red]error:[/] {escape(redact(exc.render()))}", highlight=False, markup=True)
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
