"""Run lifecycle under hostile use: kills during the MLflow mirror, resumes of finished runs, two resumes at
once, failed items redone with --retry-errors, the circuit breaker, and SIGTERM. Real processes, real signals,
a real MLflow store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.errors import ExitCode
from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.integrations.langfuse.mirror_state import trace_seed
from support.compare_runs import cli, small_runs  # noqa: F401 - the compare CLI fixture
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import langfuse_off, langfuse_on, make_run  # noqa: F401 - fixtures
from support.langfuse_mirror import mirror as lf_mirror
from support.langfuse_mirror import results as lf_results
from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]
Edit = Callable[[Path, Callable[[Any], None]], None]
pytestmark = pytest.mark.usefixtures("mlflow_store")


def mlflow_client() -> MlflowClient:
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def mlflow_runs_of(experiment: str = "counters") -> list[Any]:
    """Every MLflow run (deleted ones excluded) of `<experiment> (scripted-project)`."""
    client = mlflow_client()
    found = client.get_experiment_by_name(f"{experiment} (scripted-project)")
    return [] if found is None else client.search_runs([found.experiment_id])


def assert_each_metric_once(run_id: str) -> None:
    client = mlflow_client()
    metrics = client.get_run(run_id).data.metrics
    assert metrics
    for key in metrics:
        assert len(client.get_metric_history(run_id, key)) == 1, key


# 1. exactly one MLflow run, whatever moment of the mirror a kill hits


def test_a_half_made_mlflow_run_without_tag_is_adopted_not_duplicated(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = runs.latest()
    client = mlflow_client()
    location = (project_dir / "mlartifacts").as_uri()
    experiment_id = client.create_experiment("scripted-project/counters", artifact_location=location)  # earlier name
    orphan = client.create_run(experiment_id, run_name=run_id)  # what a kill between create and tag left

    synced = scoregate("mlflow-sync", run_id)

    assert synced.code == 0, synced.output
    (only,) = mlflow_runs_of()
    assert only.info.run_id == orphan.info.run_id
    assert only.data.tags["scoregate.run_id"] == run_id
    assert only.info.status == "FINISHED"
    assert_each_metric_once(only.info.run_id)


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


def test_a_half_made_comparison_run_is_adopted_not_duplicated(
    cli: Callable[..., CliResult],  # noqa: F811 - the fixture imported from test_compare
    project_dir: Path,
    mlflow_store: str,
) -> None:
    small_runs(project_dir / "runs")
    client = mlflow_client()
    location = (project_dir / "mlartifacts").as_uri()
    experiment_id = client.create_experiment("compare-test/comparisons", artifact_location=location)
    orphan = client.create_run(experiment_id, run_name="small-b vs small-a")  # killed before it was tagged

    result = cli("compare", "small-a", "small-b", "--json")

    assert result.code == 0, result.output
    (only,) = client.search_runs([experiment_id])
    assert only.info.run_id == orphan.info.run_id == json.loads(result.out)["mlflow_run_id"]
    assert only.data.tags["scoregate.comparison"] == "small-a..small-b"


# 2. a resume of a finished, mirrored run is a no-op; a re-sync after a moved finish time logs nothing twice


def test_resume_of_a_finished_run_is_a_no_op_that_points_to_mlflow_sync(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "counters").code == 0
    run_id = runs.latest()
    manifest = runs.manifest(run_id)
    scripted_server.clear_requests()

    resumed = scoregate("run", "--resume", run_id)

    assert resumed.code == 0, resumed.output
    assert f"run {run_id} already finished; nothing to resume" in resumed.output
    assert f"scoregate mlflow-sync {run_id}" in resumed.output
    assert scripted_server.chat_requests() == []
    assert runs.manifest(run_id) == manifest
    (only,) = mlflow_runs_of()
    assert_each_metric_once(only.info.run_id)


def test_metric_timestamps_do_not_follow_the_finish_time(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters").code == 0
    run_id = runs.latest()
    path = runs.root / run_id / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["finished_at"] = "2031-01-01T00:00:00+00:00"  # what an older resume of a finished run did
    path.write_text(json.dumps(manifest), encoding="utf-8")

    assert scoregate("mlflow-sync", run_id).code == 0

    (only,) = mlflow_runs_of()
    assert_each_metric_once(only.info.run_id)


# 3. one process per run: a second run/resume refuses and names the holder; a dead holder's lock is taken over


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


# 4. failed items can be redone; the newest record wins in the store, the summary and MLflow


def test_retry_errors_redoes_failed_items_and_the_newest_record_wins_everywhere(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.fail_next(500, times=3)  # one item: its try and both retries fail

    first = scoregate("run", "counters")

    assert first.code == 0, first.output
    run_id = runs.latest()
    assert runs.summary(run_id)["run_metrics"]["error_count"] == 1
    assert f"1 item(s) failed — retry them with `scoregate run --resume {run_id} --retry-errors`" in first.output
    plain = scoregate("run", "--resume", run_id)
    assert "already finished" in plain.output
    assert len(runs.results(run_id)) == len(DATASET_IDS)

    retried = scoregate("run", "--resume", run_id, "--retry-errors")

    assert retried.code == 0, retried.output
    lines = runs.results(run_id)
    assert len(lines) == len(DATASET_IDS) + 1  # the failure stays as history
    failed_id = next(r["item_id"] for r in lines if r["error"])
    assert [r["error"] is None for r in lines if r["item_id"] == failed_id] == [False, True]
    summary = runs.summary(run_id)
    assert summary["run_metrics"]["error_count"] == 0
    assert summary["run_metrics"]["items"] == len(DATASET_IDS)
    assert "retry them with" not in retried.output
    (only,) = mlflow_runs_of()
    assert only.data.metrics["error_count"] == 0.0
    assert only.data.metrics["success_rate"] == 1.0
    client = mlflow_client()
    history = client.get_metric_history(only.info.run_id, "error_count")
    assert sorted((m.step, m.value) for m in history) == [(0, 1.0), (1, 0.0)]
    again = scoregate("run", "--resume", run_id, "--retry-errors")
    assert "no item failed; nothing to retry" in again.output


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


# 5. SIGTERM is handled like Ctrl-C


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


def test_retry_errors_sends_the_newer_record_to_langfuse_under_the_same_ids(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    fake_langfuse: FakeLangfuse,
    langfuse_off: Callable[[], None],  # noqa: F811 - the fixture imported above
    langfuse_on: Callable[[], None],  # noqa: F811
) -> None:
    scripted_server.fail_next(400)  # one item fails for good
    store = make_run(project_dir, "counters")
    (failed,) = [r for r in lf_results(store) if r.error]
    langfuse_on()
    assert lf_mirror(store, project_dir).complete
    trace = trace_id_for(trace_seed(store.run_id, failed.item_id))

    def latest(name: str, *, run_level: bool = False) -> dict[str, Any]:
        """The newest score of that name (the server keeps the last write of an id)."""
        found = [s for s in fake_langfuse.state.scores if s["name"] == name]
        found = [s for s in found if (s["datasetRunId"] if run_level else s["traceId"] == trace)]
        return found[-1]

    assert latest("task_error")["value"] == 1.0
    assert latest("error_count", run_level=True)["value"] == 1.0
    langfuse_off()
    run_experiment(
        project_dir,
        "",
        RunOptions(
            resume=RunOptions.ResumeFrom(run_id=store.run_id, retry_errors=True),
            mirrors=RunOptions.Mirrors(off=frozenset({"mlflow"})),
        ),
    )
    langfuse_on()

    report = lf_mirror(store, project_dir)

    assert report.complete, report.lines()
    assert latest("task_error")["value"] == 0.0
    assert latest("word_count")["value"] is not None
    assert latest("error_count", run_level=True)["value"] == 0.0
    ids = [s["id"] for s in fake_langfuse.state.scores if s["name"] == "task_error" and s["traceId"] == trace]
    assert len(set(ids)) == 1  # the same score id, rewritten: an upsert, not a second score
