"""The MLflow run of an experiment reads well (checked through the MLflow client against a real store):
a markdown description with the verdict, gates and primary metrics; the dataset as a dataset input;
rounded metrics with the same keys in every run; tags for model, prompt versions and verdict."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from scoregate.sinks.mlflow.readable import rounded
from support.digits import significant_digits
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, request_schema

pytestmark = pytest.mark.usefixtures("mlflow_store")


def mlflow_run(run_id: str) -> Any:
    """The MLflow run mirrored from scoregate run `run_id`."""
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    (found,) = client.search_runs(
        [e.experiment_id for e in client.search_experiments()], filter_string=f"tags.`scoregate.run_id` = '{run_id}'"
    )
    return found


def test_the_mlflow_run_has_a_description_a_dataset_input_readable_metrics_and_tags(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "smoke").code == 0
    run_id, summary, manifest = runs.latest(), runs.summary(), runs.manifest()
    run = mlflow_run(run_id)

    note = run.data.tags["mlflow.note.content"]
    assert "**PASS**" in note and "smoke · scripted (`scripted-1`)" in note
    assert "| faithfulness | `mean(faithfulness_score) >= 4.2` | 5 | 100% | **PASS** |" in note
    assert "| faithfulness_score | 5 | [5, 5] | 6/6 |" in note
    assert note.index("| required_sections_present |") < note.index("| word_count |")  # gated scores first

    (dataset_input,) = run.inputs.dataset_inputs
    dataset = dataset_input.dataset
    receipts = manifest["receipts"]["dataset"]
    assert (dataset.name, dataset.digest) == ("smoke_v1", receipts["content_hash"][:12])
    assert json.loads(dataset.source)["uri"].endswith("/datasets/smoke_v1.jsonl")
    assert json.loads(dataset.profile) == {"num_rows": 6, "content_hash": receipts["content_hash"]}

    metrics = run.data.metrics
    assert not [k for k in metrics if k.endswith(("_median", "_std", "_min", "_max"))]  # those stay in summary.json
    for key, value in metrics.items():
        assert math.isnan(value) or value.is_integer() or significant_digits(value) <= 4, (key, value)
    assert metrics["word_count_mean"] == rounded(summary["scores"]["word_count"]["mean"])
    assert math.isnan(metrics["cost_usd_total"])  # no price set: not measured, and still the same key

    tags = run.data.tags
    assert (tags["model"], tags["model.id"], tags["verdict"]) == ("scripted", "scripted-1", "pass")
    assert tags["prompt.versions"] == ",".join(f"{n}@{v}" for n, v in summary["prompts"].items())

    assert scoregate("mlflow-sync", run_id).code == 0
    assert len(mlflow_run(run_id).inputs.dataset_inputs) == 1  # a re-sync adds no second input


def test_every_run_logs_the_same_metric_keys_even_when_a_judge_measured_nothing(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "smoke").code == 0
    measured = runs.latest()
    scripted_server.responder = lambda body: "not json" if request_schema(body) else scripted_server.default_reply(body)
    assert scoregate("run", "smoke", "--no-cache").code == 0
    unmeasured = runs.latest()
    assert runs.summary(unmeasured)["scores"]["faithfulness_score"]["coverage"] == 0

    first, second = mlflow_run(measured).data.metrics, mlflow_run(unmeasured).data.metrics
    assert set(first) == set(second)
    assert math.isnan(second["faithfulness_score_mean"]) and second["faithfulness_score_coverage"] == 0
    assert runs.summary(unmeasured)["verdict"] == "incomplete"
    assert "**INCOMPLETE**" in mlflow_run(unmeasured).data.tags["mlflow.note.content"]


def test_param_model_is_the_yaml_name_like_the_tag_and_a_run_mirrored_before_still_resyncs(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    from mlflow.entities import Param

    assert scoregate("run", "smoke").code == 0
    run_id = runs.latest()
    new = mlflow_run(run_id).data
    assert new.params["model"] == new.tags["model"] == new.params["model_name"] == "scripted"
    assert new.params["provider_model"] == new.tags["model.id"] == "scripted-1"

    assert scoregate("run", "smoke").code == 0  # a run mirrored by a version where param `model` was the id
    old_id = runs.latest()
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    experiment = mlflow_run(old_id).info.experiment_id
    client.delete_run(mlflow_run(old_id).info.run_id)
    made = client.create_run(experiment, tags={"scoregate.run_id": old_id})
    client.log_batch(made.info.run_id, params=[Param("model", "scripted-1"), Param("model_name", "scripted")])
    assert scoregate("mlflow-sync", old_id).code == 0
    old = mlflow_run(old_id).data  # params never change in MLflow: `model` keeps its old value, the rest is added
    assert (old.params["model"], old.params["model_name"], old.params["provider_model"]) == (
        "scripted-1", "scripted", "scripted-1"
    )  # fmt: skip
    assert old.tags["model"] == "scripted"
