"""Run lifecycle under hostile use, through the real `scoregate` executable: kills during the MLflow mirror, two
resumes at once, syncs waiting for a running run, the circuit breaker, and SIGTERM. Real processes, real signals,
a real MLflow store."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from support.mlflow_runs import assert_each_metric_once, mlflow_runs_of
from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]
Edit = Callable[[Path, Callable[[Any], None]], None]
pytestmark = pytest.mark.usefixtures("mlflow_store")


def test_mlflow_sync_killed_9_at_any_moment_then_redone_leaves_one_run_each_metric_once(
    scoregate: Callable[..., CliResult], start_scoregate: Start, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = runs.latest()
    for delay in (1.0, 2.5, 4.0, 5.5):
        process = start_scoregate("mlflow-sync", run_id)
        time.sleep(delay)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()

    synced = scoregate("mlflow-sync", run_id)

    assert synced.code == 0, synced.output
    (only,) = mlflow_runs_of()
    assert only.data.tags["scoregate.run_id"] == run_id
    assert_each_metric_once(only.info.run_id)


@pytest.mark.parametrize("delay", [0.0, 2.0])
def test_run_killed_9_during_its_mirror_then_resumed_leaves_one_mlflow_run_each_metric_once(
    delay: float, scoregate: Callable[..., CliResult], start_scoregate: Start, runs: Runs
) -> None:
    process = start_scoregate("run", "counters")
    deadline = time.monotonic() + 60
    while not any((runs.root / r / "summary.json").is_file() for r in runs.ids()):  # the mirror starts now
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    time.sleep(delay)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    run_id = runs.latest()

    resumed = scoregate("run", "--resume", run_id)

    assert resumed.code == 0, resumed.output
    assert "already finished" in resumed.output
    (only,) = mlflow_runs_of()
    assert only.data.tags["scoregate.run_id"] == run_id
    assert only.info.status == "FINISHED"
    assert_each_metric_once(only.info.run_id)
    again = scoregate("run", "--resume", run_id)
    assert "completed its MLflow mirror" not in again.output  # now a pure no-op
    assert len(mlflow_runs_of()) == 1


def test_a_second_resume_of_a_running_run_refuses_naming_the_pid(
    scoregate: Callable[..., CliResult], start_scoregate: Start, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.5
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)

    second = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert second.code == int(ExitCode.ERROR), second.output
    assert f"run {run_id} is in use by process {process.pid}" in second.output
    assert process.poll() is None  # the holder goes on undisturbed
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    lock = runs.root / run_id / ".lock"
    assert lock.read_text(encoding="utf-8") == str(process.pid)  # the dead holder's pid stays: a stale lock
    scripted_server.latency_s = 0.0

    resumed = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert resumed.code == 0, resumed.output
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(DATASET_IDS)


def test_syncs_and_invalidation_wait_for_a_running_run(
    scoregate: Callable[..., CliResult], start_scoregate: Start, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.5
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)
    try:
        for command in (
            ("mlflow-sync", run_id),
            ("langfuse-sync", run_id),
            ("runs", "invalidate", run_id, "--reason", "x"),
        ):
            refused = scoregate(*command)

            assert refused.code == int(ExitCode.ERROR), refused.output
            assert f"run {run_id} is in use by process {process.pid}" in refused.output
        assert not (runs.root / run_id / "invalidation.json").exists()
        assert process.poll() is None
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def test_circuit_breaker_stops_a_run_whose_endpoint_went_down(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: Edit,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["settings"].update(max_consecutive_failures=2))
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)
    scripted_server.down()

    out, err = process.communicate(timeout=60)

    assert process.returncode == int(ExitCode.INTERRUPTED), out + err
    text = " ".join((out + err).split())
    assert "stopped early: 2 calls in a row failed" in text
    assert f"scoregate run --resume {run_id} --retry-errors" in text
    assert "Traceback" not in text
    manifest = runs.manifest(run_id)
    assert manifest["status"] == "interrupted"
    assert "cannot connect" in manifest["stopped_because"]
    assert len(runs.results(run_id)) < len(DATASET_IDS)  # the outage did not burn through the dataset


def test_sigterm_interrupts_the_run_with_exit_143_and_a_resume_hint(
    start_scoregate: Start, scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)

    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)

    assert process.returncode == 143, out + err
    text = " ".join((out + err).split())
    assert f"run {run_id} terminated (SIGTERM)" in text
    assert f"resume with `scoregate run --resume {run_id}`" in text
    assert "Traceback" not in text
    assert runs.manifest(run_id)["status"] == "interrupted"
    scripted_server.latency_s = 0.0
    resumed = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")
    assert resumed.code == 0, resumed.output
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(DATASET_IDS)
