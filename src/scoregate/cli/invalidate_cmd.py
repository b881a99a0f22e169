"""`scoregate runs invalidate RUN --reason TEXT [--superseded-by RUN]`."""

from __future__ import annotations

from typing import Annotated

import typer

from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()
err_console = lazy_console(stderr=True)


def invalidate(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the run is invalid (kept with it).")],
    superseded_by: Annotated[str | None, typer.Option("--superseded-by", help="The run that replaces it.")] = None,
    project: ProjectOption = None,
) -> None:
    """Mark a run invalid (store, MLflow, Langfuse); compare, rank, gates, hard cases and promotion skip it."""
    from scoregate.app import invalidate_run

    report = invalidate_run(project_root(project), run_id, reason, superseded_by=superseded_by)
    print_wrapped(console, f"run {run_id} marked invalid: {report.record['invalid_reason']}")
    for line in report.done:
        print_wrapped(console, line, first="  done     ", indent="           ")
    for line in report.skipped:
        print_wrapped(console, line, first="  skipped  ", indent="           ")
    for line in report.errors:
        print_wrapped(err_console, line, first="  failed   ", indent="           ")
    if report.errors:
        raise typer.Exit(1)
