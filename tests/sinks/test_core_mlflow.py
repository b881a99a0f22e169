"""The MLflow mirror against a real sqlite tracking store: one run per scoregate run, re-syncs never duplicate."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.entities import Run
from mlflow.tracking import MlflowClient

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.usefixtures("mlflow_store")

SECRET = "sk-test-SECRET"
ARTIFACTS = {
    "scores.csv",
    "summary.json",
    "manifest.json",
    "results.jsonl",
    "report.html",
    "metrics.json",
    "metrics.csv",
}


def mlflow_runs(project: str = "scripted-project", experiment: str = "smoke") -> tuple[MlflowClient, list[Run]]:
    """The MLflow client of this test's store, and every run of experiment `<experiment> (<project>)`."""
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    found = client.get_experiment_by_name(f"{experiment} ({project})")
    assert found is not None, "no MLflow experiment <experiment> (<project>)"
    return client, client.search_runs([found.experiment_id])


def test_a_run_is_mirrored_as_one_mlflow_run_with_metrics_params_tags_and_artifacts(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, tmp_path: Path
) -> None:
    result = scoregate("run", "smoke")

    assert result.code == 0, result.output
    client, (mirrored,) = mlflow_runs()
    run_id, summary, manifest = runs.latest(), runs.summary(), runs.manifest()
    assert runs.root.joinpath(run_id, "links.json").read_text().count(mirrored.info.run_id) == 1
    assert f"mlflow: run {mirrored.info.run_id}" in result.output

    metrics = mirrored.data.metrics
    for score in ("faithfulness_score", "conciseness_score", "actionability_score", "word_count"):
        for stat in ("mean", "ci_low", "ci_high", "coverage"):
            assert metrics[f"{score}_{stat}"] == pytest.approx(summary["scores"][score][stat], rel=1e-3)  # rounded
    assert metrics["WeightedQuality_mean"] == 5.0
    for key in ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms"):
        assert metrics[key] == pytest.approx(summary["run_metrics"][key], rel=1e-3)
        assert metrics[key] > 0
    assert metrics["gate_faithfulness"] == 1.0
    assert metrics["gates_passed"] == len(summary["gates"]) == 6

    params = mirrored.data.params
    receipts = manifest["receipts"]
    assert params["dataset_hash"] == receipts["dataset"]["content_hash"]
    assert params["prompt.summarization-catchup.version"] == summary["prompts"]["summarization-catchup"]
    assert params["prompt.summarization-catchup.temperature"] == "0.2"
    assert (params["provider_model"], params["model_endpoint"]) == ("scripted-1", scripted_server.url)
    assert params["model"] == params["model_name"] == mirrored.data.tags["model"] == "scripted"  # one meaning
    assert params["judge_endpoint"] == scripted_server.url

    tags = mirrored.data.tags
    assert tags["scoregate.run_id"] == run_id
    assert tags["scoregate.verdict"] == "pass"
    assert tags["prompt.names"] == "summarization-catchup,summarization-howto"
    assert tags["prompt.summarization-howto.version"] == summary["prompts"]["summarization-howto"]

    assert {a.path for a in client.list_artifacts(mirrored.info.run_id)} == ARTIFACTS
    scores_csv = Path(client.download_artifacts(mirrored.info.run_id, "scores.csv", str(tmp_path)))
    rows = list(csv.DictReader(scores_csv.open(encoding="utf-8")))
    assert sorted(r["item_id"] for r in rows) == ["smoke-001", "smoke-002", "smoke-003", "smoke-005", "smoke-006",
                                                  "smoke-007"]  # fmt: skip
    assert {r["faithfulness_score"] for r in rows} == {"5"}


def test_mlflow_sync_twice_keeps_one_run_and_one_value_per_metric(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "smoke").code == 0
    run_id = runs.latest()
    client, (first,) = mlflow_runs()

    for _ in range(2):
        synced = scoregate("mlflow-sync", run_id)
        assert synced.code == 0, synced.output
        assert f"mlflow: run {first.info.run_id} is up to date with {run_id}" in synced.output

    client, (again,) = mlflow_runs()
    assert again.info.run_id == first.info.run_id
    assert json.dumps(again.data.metrics, sort_keys=True) == json.dumps(first.data.metrics, sort_keys=True)  # NaN too
    for key in ("faithfulness_score_mean", "gates_passed", "latency_p95_ms"):
        assert len(client.get_metric_history(again.info.run_id, key)) == 1, key
    assert {a.path for a in client.list_artifacts(again.info.run_id)} == ARTIFACTS


def test_the_first_mlflow_sync_of_a_run_says_it_created_the_mlflow_run(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    run_id = runs.latest()

    first, second = scoregate("mlflow-sync", run_id), scoregate("mlflow-sync", run_id)

    assert first.code == second.code == 0, first.output + second.output
    _, (made,) = mlflow_runs()
    assert f"mlflow: created run {made.info.run_id} for {run_id}" in first.output, first.output
    assert "up to date" not in first.output
    assert f"mlflow: run {made.info.run_id} is up to date with {run_id}" in second.output, second.output
    assert "created" not in second.output


def test_mlflow_sync_of_an_unknown_run_says_how_to_find_runs(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("mlflow-sync", "smoke-20000101-000000-abcd")

    assert result.code == 1
    assert "no run 'smoke-20000101-000000-abcd'" in result.output
    assert "scoregate runs list" in result.output


def test_the_api_key_never_leaves_the_request(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    outputs = [
        scoregate("run", "smoke"),
        scoregate("mlflow-sync", runs.latest()),
        scoregate("runs", "show", runs.latest()),
    ]

    assert all(o.code == 0 for o in outputs)
    assert re.search(r"^mlflow: run [0-9a-f]{32} \(experiment \d+\)$", outputs[2].out, re.MULTILINE), outputs[2].out
    assert "link mlflow_run_id" not in outputs[2].out
    assert {r.headers.get("authorization") for r in scripted_server.chat_requests()} == {f"Bearer {SECRET}"}
    for output in outputs:
        assert SECRET not in output.out + output.err
    client, (mirrored,) = mlflow_runs()
    visible: dict[str, Any] = {**mirrored.data.params, **mirrored.data.tags}
    assert not [k for k, v in visible.items() if SECRET in f"{k}={v}"]
    downloaded = Path(client.download_artifacts(mirrored.info.run_id, "", str(tmp_path / "artifacts")))
    files = [p for p in [*downloaded.rglob("*"), *project_dir.rglob("*"), *(tmp_path / "mlflow").rglob("*")]
             if p.is_file()]  # fmt: skip
    assert any(p.name == "manifest.json" for p in files) and any(p.name == "mlflow.db" for p in files)
    assert not [p for p in files if SECRET.encode() in p.read_bytes()]
