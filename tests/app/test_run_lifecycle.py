"""Run lifecycle, in this process: a half-made MLflow run is adopted, not duplicated; a resume of a finished run
is a no-op; metric timestamps; failed items redone with --retry-errors win everywhere. The kills, signals and
concurrent resumes through real processes are in tests/e2e/test_run_lifecycle_processes.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.integrations.langfuse.mirror_state import trace_seed
from support.compare_runs import cli, small_runs  # noqa: F401 - the compare CLI fixture
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.langfuse_mirror import langfuse_off, langfuse_on, make_run  # noqa: F401 - fixtures
from support.langfuse_mirror import mirror as lf_mirror
from support.langfuse_mirror import results as lf_results
from support.mlflow_runs import assert_each_metric_once, mlflow_client, mlflow_runs_of
from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.usefixtures("mlflow_store")


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
