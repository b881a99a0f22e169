"""Per-item MLflow evaluation rows (`run --eval-rows`, `mlflow-sync --eval-rows`) against a real store:
one trace per item linked to the run, its request, response and expected output, every score an assessment
with its rationale, a null score an assessment error with its reason; writing again never duplicates."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from scoregate.sinks.mlflow.eval_rows import trace_id_of
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, request_schema

pytestmark = pytest.mark.usefixtures("mlflow_store")


def rows_of(mlflow_run_id: str) -> dict[str, Any]:
    """The traces MLflow lists for a run (as its Evaluations/Traces view does), by item id."""
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    experiment_id = client.get_run(mlflow_run_id).info.experiment_id
    mlflow.set_tracking_uri(os.environ["MLFLOW_TRACKING_URI"])
    traces = mlflow.search_traces(locations=[experiment_id], run_id=mlflow_run_id, return_type="list")
    return {t.info.tags["mlflow.traceName"]: t for t in traces}


def test_eval_rows_hold_each_item_with_every_score_as_an_assessment(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    # the faithfulness judge answers without its field: that score is null with a reason on every item
    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is not None and "faithfulness_score" in json.dumps(schema):
            return json.dumps({"reasoning": "forgot the score"})
        return scripted_server.default_reply(body)

    scripted_server.responder = reply
    result = scoregate("run", "smoke", "--eval-rows")
    assert result.code == 0, result.output
    run_id = runs.latest()
    mlflow_run_id = json.loads((runs.root / run_id / "links.json").read_text())["mlflow_run_id"]
    assert "mlflow: 6 evaluation rows (one per item) on the run" in result.output

    rows = rows_of(mlflow_run_id)
    stored = {r["item_id"]: r for r in runs.results()}
    assert set(rows) == set(stored)
    trace = rows["smoke-002"]
    assert trace.info.trace_id == trace_id_of(run_id, "smoke-002")
    assert trace.info.request_metadata["mlflow.sourceRun"] == mlflow_run_id
    assert json.loads(trace.data.spans[0].to_dict()["attributes"]["mlflow.spanInputs"])["item_id"] == "smoke-002"
    assert "## TL;DR" in trace.info.response_preview
    by_name = {a.name: a for a in trace.info.assessments}
    assert set(by_name) == {s["name"] for s in stored["smoke-002"]["scores"]}
    conciseness = by_name["conciseness_score"]
    assert conciseness.feedback.value == 5 and conciseness.rationale == "The summary is grounded and specific."
    missing = by_name["faithfulness_score"]
    assert missing.feedback.value is None and "faithfulness_score" in missing.feedback.error.error_message
    assert by_name["word_count"].source.source_id == "scoregate:counters_v1"

    synced = scoregate("mlflow-sync", run_id, "--eval-rows")
    assert synced.code == 0, synced.output
    again = rows_of(mlflow_run_id)
    assert set(again) == set(stored) and len(again) == 6  # replaced, not added


def test_the_expected_output_becomes_an_expectation(tmp_path: Any) -> None:
    from scoregate.sinks.mlflow.eval_rows import _assessments
    from scoregate.store.records import ItemResult, Score

    result = ItemResult(0, "i1", "p@1", {"text": "x"}, {"a": 1}, expected_output={"a": 2},
                        scores=[Score("eqs", 0.5, "numeric", "extraction_v1", comment="half")])  # fmt: skip
    made = {a.name: a for a in _assessments(result, "tr-" + "0" * 32, 0)}
    assert made["expected_response"].expectation.value == {"a": 2}
    assert made["eqs"].feedback.value == 0.5 and made["eqs"].rationale == "half"
