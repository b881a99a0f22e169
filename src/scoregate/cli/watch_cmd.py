"""`scoregate runs watch [RUN]`: follow a run's live progress from another terminal."""

from __future__ import annotations

from typing import Annotated

import typer

from scoregate.cli.options import ProjectOption, project_root
from scoregate.errors import ExitCode


def watch(
    run_id: Annotated[
        str | None, typer.Argument(metavar="[RUN]", help="Run id; default: the run in runs/active-run.json.")
    ] = None,
    interval: Annotated[float, typer.Option(min=0.1, help="Seconds between looks.")] = 0.5,
    stale_after: Annotated[
        float, typer.Option(min=1.0, help="Call the run dead when its progress file is this many seconds old.")
    ] = 15.0,
    project: ProjectOption = None,
) -> None:
    """Follow a run with a progress bar until it ends; exit 1 when it failed, was interrupted or died."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    from scoregate.app import ending_line, follow, progress_line, run_to_watch
    from scoregate.cli.layout import print_wrapped
    from scoregate.support.line_ends import trim_line_ends

    console = trim_line_ends(Console(emoji=False, highlight=False))
    runs_dir = project_root(project) / "runs"
    run = run_to_watch(runs_dir, run_id)
    print_wrapped(console, f"watching run {run}")
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=24),
        TextColumn("{task.fields[line]}"),
        console=console,
        disable=not console.is_terminal,
    )
    task = bar.add_task("run", total=None, line="")
    last_counts: tuple[object, ...] | None = None
    ended = None
    with bar:
        for state in follow(runs_dir, run, interval_s=interval, stale_after_s=stale_after):
            snapshot = state.snapshot
            line = progress_line(snapshot)
            bar.update(task, completed=snapshot.get("done") or 0, total=snapshot.get("total"), line=line)
            counts = (snapshot.get("done"), snapshot.get("failed"), snapshot.get("total"))
            if not console.is_terminal and counts != last_counts and state.ended is None:
                print_wrapped(console, line, first="  ")  # a log line per finished item, not per tick of the ETA
            last_counts = counts
            ended = state
    assert ended is not None
    if not console.is_terminal:
        print_wrapped(console, progress_line(ended.snapshot), first="  ")
    print_wrapped(console, ending_line(ended))
    if ended.ended != "finished":
        raise typer.Exit(int(ExitCode.ERROR))
