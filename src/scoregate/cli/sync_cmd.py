"""`scoregate sync RUN --to NAME`: mirror a stored run to some trackers again; `mlflow-sync` and `langfuse-sync`
are its documented aliases (`sync RUN --to mlflow`, `sync RUN --to langfuse`), with their own words."""

from __future__ import annotations

from typing import Annotated

import typer

from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()
EVAL_ROWS_HELP = "Also write each item as an MLflow evaluation row (~57 ms/item)."


def sync(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    to: Annotated[
        list[str] | None,
        typer.Option(
            "--to",
            metavar="NAME",
            help="The sink to mirror to (mlflow, langfuse or a plug-in's; repeatable). Default: every configured one.",
        ),
    ] = None,
    eval_rows: Annotated[bool, typer.Option("--eval-rows", help=EVAL_ROWS_HELP)] = False,
    project: ProjectOption = None,
) -> None:
    """Mirror a stored run to its trackers again; updates each mirror, never a duplicate."""
    from scoregate.app import sync_stored_run

    outcome = sync_stored_run(project_root(project), run_id, to, item_rows=eval_rows)
    for result in outcome.results.values():
        report = result.report
        for line in [report.skipped] if report.skipped else report.lines:  # redacted by mirror_all
            print_wrapped(console, line)
        for warning in report.warnings:
            print_wrapped(console, warning, style="yellow")
    for note in outcome.notes:
        print_wrapped(console, note, style="yellow")
    for name in outcome.results:
        outcome.raise_for(name)
    troubles = {name: result.report.problem for name, result in outcome.results.items() if result.report.problem}
    for name, problem in troubles.items():
        print_wrapped(console, f"{name}: {problem}", style="yellow")
    if troubles:
        raise typer.Exit(1)
    done = [name for name, result in outcome.results.items() if not result.report.skipped]
    if done:
        print_wrapped(console, f"run {run_id} is mirrored to {', '.join(done)}", style="green")


def mlflow_sync(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    eval_rows: Annotated[bool, typer.Option("--eval-rows", help=EVAL_ROWS_HELP)] = False,
    project: ProjectOption = None,
) -> None:
    """Mirror a stored run to MLflow again; updates the same MLflow run, never a duplicate."""
    from scoregate.app import sync_stored_run

    outcome = sync_stored_run(project_root(project), run_id, "mlflow", item_rows=eval_rows)
    mlflow = outcome.results["mlflow"]
    if mlflow.report.link and mlflow.report.created:
        print_wrapped(console, f"mlflow: created run {mlflow.report.link} for {run_id}")
    elif mlflow.report.link:
        print_wrapped(console, f"mlflow: run {mlflow.report.link} is up to date with {run_id}")
    outcome.raise_for("mlflow")
    rows, mlflow_run = mlflow.report.item_rows, mlflow.report.link
    if rows is not None:
        print_wrapped(console, f"mlflow: {rows} evaluation rows (one per item) on run {mlflow_run}")
    for note in outcome.notes:
        print_wrapped(console, note, style="yellow")


def langfuse_sync(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    project: ProjectOption = None,
) -> None:
    """Mirror a stored run to Langfuse as an experiment; sends only what Langfuse has not confirmed yet."""
    from scoregate.app import sync_stored_run

    outcome = sync_stored_run(project_root(project), run_id, "langfuse")
    outcome.raise_for("langfuse")
    for line in outcome.results["langfuse"].report.lines:  # redacted by mirror_all
        print_wrapped(console, line)
    for note in outcome.notes:
        print_wrapped(console, note, style="yellow")
    print_wrapped(console, f"langfuse: run {run_id} is fully mirrored", style="green")
