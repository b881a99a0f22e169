"""`runs watch`: a run followed from another terminal, as the lines a watcher prints."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WatchTick:
    """One look at a watched run: its counts, its progress line, and how it ended (None while it goes on)."""

    done: int | None
    failed: int | None
    total: int | None
    line: str
    ended: str | None
    ending: str
    """The line that says how the run ended (empty while it goes on)."""


@dataclass(frozen=True)
class WatchedRun:
    """The run being watched (its id), and a look at it per tick until it ends."""

    run_id: str
    ticks: Iterator[WatchTick]


def watch_run(root: Path, run_id: str | None, *, interval_s: float, stale_after_s: float) -> WatchedRun:
    """Follow a run of the project at `root` (default: the run in runs/active-run.json) until it ends or dies."""
    from scoregate.engine.watch import ending_line, follow, progress_line, run_to_watch

    runs_dir = root / "runs"
    run = run_to_watch(runs_dir, run_id)

    def ticks() -> Iterator[WatchTick]:
        for state in follow(runs_dir, run, interval_s=interval_s, stale_after_s=stale_after_s):
            snap = state.snapshot
            ending = ending_line(state) if state.ended is not None else ""
            counts = snap.get("done"), snap.get("failed"), snap.get("total")
            yield WatchTick(*counts, line=progress_line(snap), ended=state.ended, ending=ending)

    return WatchedRun(run, ticks())
