"""`scoregate merge`: join the shards of a sharded run into the one run (the only writer of it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.mirror_flags import NoMirrorOption, mirrors_off
from scoregate.cli.options import ProjectOption, project_root
from scoregate.errors import ExitCode
from scoregate.support.console import lazy_console

console = lazy_console()


def merge(
    run_id: Annotated[str, typer.Argument(help="The sharded run's id (printed by each shard).")],
    shard_dirs: Annotated[
        list[Path] | None,
        typer.Argument(help="Shard directories, or folders holding them (default: runs/RUN_ID/shards/*)."),
    ] = None,
    fail_on_gates: Annotated[bool, typer.Option("--fail-on-gates", help="Exit with code 3 when a gate fails.")] = False,
    no_mirror: NoMirrorOption = None,
    no_mlflow: Annotated[
        bool, typer.Option("--no-mlflow", help="Do not mirror the run to MLflow (= --no-mirror mlflow).")
    ] = False,
    no_langfuse: Annotated[
        bool, typer.Option("--no-langfuse", help="Do not write the run's Langfuse scores (= --no-mirror langfuse).")
    ] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write runs/RUN_ID/report.html.")] = False,
    project: ProjectOption = None,
) -> None:
    """Merge the shards of a run into one run: check them, summarise, gate, report, mirror; idempotent."""
    from scoregate.app import ProjectOverview, merge_run

    off = mirrors_off(no_mirror, no_mlflow=no_mlflow, no_langfuse=no_langfuse)
    outcome = merge_run(project_root(project), run_id, shard_dirs, no_mirror=off, write_report=not no_report)
    if outcome.nothing_to_do is not None:
        print_wrapped(console, outcome.nothing_to_do)
    else:
        from scoregate.cli.render import print_summary

        directions = ProjectOverview(project_root(project)).score_directions()
        print_summary(console, outcome.summary_record, directions, said_below=outcome.incomplete_reason)
        print_wrapped(
            console, f"merged {len(outcome.shards)} shard(s) into run {outcome.run_id}: {', '.join(outcome.shards)}"
        )
        if outcome.report is not None:
            print_wrapped(console, keep("report:", str(outcome.report)))
        for note in outcome.mirror_notes:  # each sink's lines: MLflow's run, Langfuse's experiment
            print_wrapped(console, note)
        for sink, error in outcome.mirror_errors.items():
            print_wrapped(console, f"{sink} failed: {error} — run `scoregate merge {run_id}` again", style="yellow")
    if outcome.missing_items:
        shards = f" (shards {', '.join(outcome.missing_shards)} missing)" if outcome.missing_shards else ""
        print_wrapped(
            console,
            f"INCOMPLETE: {len(outcome.missing_items)} planned item(s) missing{shards}: {outcome.missing_text}; the "
            f"gates could not decide. Run the missing shards, then `scoregate merge {run_id}` again",
            style="yellow",
        )
        raise typer.Exit(int(ExitCode.UNDECIDED))
    if fail_on_gates and outcome.verdict == "fail":
        raise typer.Exit(int(ExitCode.GATES_FAILED))
    if fail_on_gates and outcome.verdict == "incomplete":
        raise typer.Exit(int(ExitCode.UNDECIDED))
