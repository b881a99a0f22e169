"""SIGTERM at any moment of a run's items: exit 143, the store intact, and on stderr one clear message, never a
traceback or asyncio's "Task exception was never retrieved". Real processes, real signals, many timings."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from support.grow_dataset import grow_dataset
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Start = Callable[..., "subprocess.Popen[str]"]
ITEMS = 300
NOISE = ("Traceback", "never retrieved", "Exception ignored", "Task was destroyed", "CancelledError", "Terminated()")


def stored_lines(runs: Runs) -> int:
    """How many result lines the (only) run has stored so far; 0 before it exists."""
    ids = runs.ids()
    path = runs.root / ids[0] / "results.jsonl" if ids else None
    return path.read_bytes().count(b"\n") if path is not None and path.is_file() else 0


def wait_for_lines(process: subprocess.Popen[str], runs: Runs, at_least: int, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while stored_lines(runs) < at_least:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"fewer than {at_least} items stored in {limit_s:.0f}s"
        time.sleep(0.005)


def test_sigterm_at_many_moments_prints_one_clear_message_and_keeps_the_store(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
) -> None:
    ids = grow_dataset(project_dir, ITEMS)
    scripted_server.latency_s = 0.002
    # After 20..245 stored items (the reported range), at moments that land inside workers, judges and writes.
    for at in (1, 20, 45, 70, 95, 120, 150, 180, 215, 245):
        for run_id in runs.ids():  # one run at a time in the store, so `stored_lines` reads the new one
            (runs.root / run_id).rename(project_dir / f"done-{run_id}")
        process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow", "--concurrency", "8")
        wait_for_lines(process, runs, at)

        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)

        (run_id,) = runs.ids()
        assert process.returncode == 143, f"SIGTERM after {at} items: exit {process.returncode}\n{out}{err}"
        for noise in NOISE:
            assert noise not in err + out, f"SIGTERM after {at} items printed {noise!r}:\n{err}"
        text = " ".join(err.split())
        assert f"error: run {run_id} terminated (SIGTERM);" in text, err
        assert text.count("error:") == 1, err
        assert f"resume with `scoregate run --resume {run_id}`" in text, err
        assert runs.manifest(run_id)["status"] == "interrupted"
        kept = runs.results(run_id)  # every stored line is whole JSON (a damaged one would raise here)
        assert f"{len(kept)} finished item(s) are kept" in text, err
        assert len({r["item_id"] for r in kept}) == len(kept)
    scripted_server.latency_s = 0.0

    resumed = scoregate("run", "--resume", runs.ids()[0], "--no-cache", "--no-mlflow")

    assert resumed.code == 0, resumed.output
    assert sorted(r["item_id"] for r in runs.results()) == sorted(ids)
