"""Exactly once: a run killed with -9 or interrupted with Ctrl-C resumes without losing or repeating an item."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from scoregate.errors import ExitCode
from support.projects import DATASET_IDS, CliResult, Runs
from support.resume_checks import assert_complete_exactly_once, stored_ids, task_requests_per_item
from support.scripted_openai import ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]


def test_kill_9_then_resume_runs_each_item_exactly_once(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    runs: Runs,
) -> None:
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished_before_kill = stored_ids(runs, run_id)
    assert 2 <= len(finished_before_kill) < len(DATASET_IDS)
    scripted_server.latency_s = 0.0

    result = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert result.code == 0, result.output
    assert_complete_exactly_once(runs, run_id)
    requests = task_requests_per_item(scripted_server, project_dir)
    for item_id in finished_before_kill:
        assert requests[item_id] == 1, f"{item_id} finished before the kill but was asked again"
    assert all(count >= 1 for count in requests.values())


def test_ctrl_c_exits_130_with_the_resume_hint_and_keeps_finished_items(
    start_scoregate: Start, scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)
    # On a loaded machine the other 5 items could all finish before the signal lands: from now on a reply takes
    # longer than the test, so Ctrl-C always meets a run with items left.
    scripted_server.latency_s = 60

    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=30)

    assert process.returncode == ExitCode.INTERRUPTED
    message = " ".join(err.split())
    assert f"run {run_id} interrupted" in message
    assert f"scoregate run --resume {run_id}" in message
    assert "Traceback" not in err
    kept = stored_ids(runs, run_id)
    assert 1 <= len(kept) < len(DATASET_IDS)
    assert f"{len(kept)} finished item(s) are kept" in message
    assert runs.manifest(run_id)["status"] == "interrupted"
    listed = " ".join(scoregate("runs", "list").output.split())
    assert f"{run_id} interrupted" in listed and f"counters on smoke_v1 {len(kept)}/6 items" in listed
    shown = scoregate("runs", "show", run_id)
    assert f"no summary yet: resume with `scoregate run --resume {run_id}`" in shown.output


def test_a_resume_keeps_no_cache_as_the_run_recorded_it(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    runs: Runs,
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0  # every item's reply is in the cache now
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1, besides=(runs.latest(),))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = stored_ids(runs, run_id)
    scripted_server.latency_s = 0.0
    scripted_server.clear_requests()

    result = scoregate("run", "--resume", run_id, "--no-mlflow")  # the printed resume command: no --no-cache

    assert result.code == 0, result.output
    assert runs.manifest(run_id)["options"]["cache"] is False
    resumed = [r for r in runs.results(run_id) if r["item_id"] not in kept]
    assert resumed and not any(call["cached"] for r in resumed for call in r["calls"])
    assert len(scripted_server.task_requests()) == len(resumed)
