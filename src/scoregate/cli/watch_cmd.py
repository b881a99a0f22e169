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

    from scoregate.app import watch_run
    from scoregate.cli.layout import print_wrapped
    from scoregate.support.line_ends import trim_line_ends

    console = trim_line_ends(Console(emoji=False, highlight=False))
    watched = watch_run(project_root(project), run_id, interval_s=interval, stale_after_s=stale_after)
    print_wrapped(console, f"watching run {watched.run_id}")
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
        for tick in watched.ticks:
            bar.update(task, completed=tick.done or 0, total=tick.total, line=tick.line)
            counts = (tick.done, tick.failed, tick.total)
            if not console.is_terminal and counts != last_counts and tick.ended is None:
                print_wrapped(console, tick.line, first="  ")  # a log line per finished item, not per tick of the ETA
            last_counts = counts
            ended = tick
    assert ended is not None
    if not console.is_terminal:
        print_wrapped(console, ended.line, first="  ")
    print_wrapped(console, ended.ending)
    if ended.ended != "finished":
        raise typer.Exit(int(ExitCode.ERROR))
