"""Live progress: `scoregate runs watch` without an active run, with a damaged pointer, on a finished run, and
the figures it prints. Following a live run in another process is in tests/e2e/test_live_progress_processes.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support.projects import CliResult, Runs


def test_runs_watch_without_an_active_run_says_how_to_start_one(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("runs", "watch")

    assert result.code == 1
    assert "no run to watch" in result.output and "scoregate run EXPERIMENT" in result.output


def test_runs_watch_with_a_damaged_pointer_says_so(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    (project_dir / "runs").mkdir()
    pointer = project_dir / "runs" / "active-run.json"
    pointer.write_text('["not", "a", "pointer"]', encoding="utf-8")

    result = scoregate("runs", "watch")

    assert result.code == 1, result.output
    assert f"no run to watch: {pointer} is damaged" in result.output


def test_runs_watch_on_a_finished_run_reports_it_at_once(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--limit", "2").code == 0

    result = scoregate("runs", "watch", runs.latest())

    assert result.code == 0
    assert f"run {runs.latest()} finished: 2/2 items, 0 failed" in result.output


def test_runs_watch_writes_eta_and_rate_as_the_run_progress_line_does() -> None:
    from scoregate.engine.watch import progress_line
    from scoregate.support.figures import clock_text

    snap = {"done": 30, "total": 60, "failed": 2, "items_per_s": 2.1, "eta_s": 125.0, "tokens": {"total": 12000}}
    assert progress_line(snap) == "30/60 items  2 failed  2.1 items/s  ETA 2m05s  12,000 tok"
    slow = {**snap, "items_per_s": 0.004, "eta_s": 7500.0}
    assert progress_line(slow) == "30/60 items  2 failed  4m10s/item  ETA 2h05m  12,000 tok"
    for eta in (0.0, 14.3, 3720.0):
        assert f"ETA {clock_text(eta)}" in progress_line({**snap, "eta_s": eta})
    assert "ETA 0.0 s" in progress_line({**snap, "eta_s": 0.0}) and "0:00" not in progress_line({**snap, "eta_s": 0.0})
