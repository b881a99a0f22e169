"""`run --repeat K` says item runs and items consistently: the progress counts item runs (items × K), the summary
counts items and says its figures are those of repeat 1."""

from __future__ import annotations

import re
from collections.abc import Callable

from scoregate.engine.progress import RunProgress
from support.progress_clock import FakeClock, plain_console
from support.projects import CliResult


def test_a_repeated_run_says_item_runs_in_its_progress_and_items_in_its_summary(
    scoregate: Callable[..., CliResult],
) -> None:
    result = scoregate("run", "counters", "--no-mlflow", "--limit", "3", "--repeat", "4")

    assert result.code == 0, result.output
    words = " ".join(result.output.split())
    assert re.search(r"12/12 item runs \(3 items × 4\) · [\d.]+ item runs/s · 0 failed", words), result.output
    assert "12/12 items" not in words
    assert "items 3 × 4 repeats (these figures: repeat 1)" in words, result.output


def test_the_heartbeat_of_a_repeated_run_counts_item_runs() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(264, console=console, clock=clock, heartbeat_s=30, repeat=8)
    clock.now += 31
    progress.beat()

    assert " ".join(out.getvalue().split()).startswith("0/264 item runs (33 items × 8) · 0 calls done")
