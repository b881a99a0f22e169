"""The stop-early line of `scoregate run --stop-early` and `scoregate runs show`: where it stopped, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from scoregate.cli.layout import print_wrapped

if TYPE_CHECKING:
    from scoregate.store.record import RunSummary


def print_stop_early(console: Console, summary: RunSummary, run_id: str) -> None:
    """Print the summary's stop-early verdict and, for a stopped run, how to continue it; nothing otherwise."""
    block = summary.stop_early
    if block is None:
        return
    from scoregate.app import stop_line

    print_wrapped(console, stop_line(block), first="stop early: ", first_style="bold")
    if block.stopped:
        print_wrapped(console, f"to run the other items too: `scoregate run --resume {run_id}`")
