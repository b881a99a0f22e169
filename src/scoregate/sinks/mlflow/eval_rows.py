"""A run's items as MLflow evaluation rows: one trace per item, linked to the run's MLflow run, holding the
request (the item's input), the response (its output, or its error), the expected output as an expectation,
and every score as a feedback assessment with its rationale (a null score is an assessment error carrying
its reason, never a 0). MLflow's per-item view and "compare to run" then work on every run.

The traces are written straight into the tracking store (one write per item with its assessments, spans
in batches) rather than through `mlflow.genai.evaluate`, which replays every score through a scorer and
costs seconds per item. Trace ids derive from the run and item ids, and writing again first deletes the
run's rows, so a re-sync never duplicates an item.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore

ROW_TAG = "scoregate.row"
ROWS_TAG = "scoregate.eval_rows"
PREVIEW = 1000
BATCH = 200


def trace_id_of(run_id: str, item_id: str) -> str:
    """The deterministic MLflow trace id of one item of one run (`tr-` + 32 hex digits)."""
    return "tr-" + hashlib.sha256(f"scoregate/{run_id}/{item_id}".encode()).hexdigest()[:32]


def _clip(text: str) -> str:
    """A name cut to PREVIEW characters (MLflow refuses a trace name over 4,096 characters)."""
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _assessments(result: ItemResult, trace_id: str, stamp: int) -> list[Any]:
    from mlflow.entities import AssessmentError, AssessmentSource, Expectation, Feedback

    made: list[Any] = []
    for score in result.scores:
        source = AssessmentSource(source_type="CODE", source_id=f"scoregate:{score.evaluator}")
        if score.value is None:
            error = AssessmentError(error_code="NOT_MEASURED", error_message=score.reason or "not measured")
            made.append(Feedback(name=score.name, error=error, source=source, trace_id=trace_id, create_time_ms=stamp))
            continue
        value = int(score.value) if isinstance(score.value, bool) else score.value
        made.append(
            Feedback(name=score.name, value=value, rationale=score.comment, source=source, trace_id=trace_id,
                     create_time_ms=stamp)
        )  # fmt: skip
    if result.expected_output is not None:
        made.append(
            Expectation(name="expected_response", value=result.expected_output, trace_id=trace_id,
                        source=AssessmentSource(source_type="HUMAN", source_id="dataset"), create_time_ms=stamp)
        )  # fmt: skip
    return made


def _row(result: ItemResult, run_id: str, mlflow_run_id: str, experiment_id: str, stamp: int) -> tuple[Any, Any]:
    """The TraceInfo (with assessments) and root Span of one item."""
    from mlflow.entities import Span, TraceInfo, TraceLocation, TraceState

    trace_id = trace_id_of(run_id, result.item_id)
    request = {**result.input, "item_id": result.item_id}
    response = result.output if result.error is None else {"error": result.error, "raw_output": result.raw_output}
    task = result.task_call
    duration = int(task.latency_ms) if task is not None and task.latency_ms is not None else 0
    inputs, outputs = _json(request), _json(response)
    info = TraceInfo(
        trace_id=trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=stamp,
        execution_duration=duration,
        state=TraceState.OK if result.error is None else TraceState.ERROR,
        request_preview=inputs[:PREVIEW],
        response_preview=outputs[:PREVIEW],
        trace_metadata={
            "mlflow.sourceRun": mlflow_run_id,
            "mlflow.traceInputs": inputs[:PREVIEW],
            "mlflow.traceOutputs": outputs[:PREVIEW],
            "mlflow.trace_schema.version": "3",
        },
        tags={"mlflow.traceName": _clip(result.item_id), ROW_TAG: run_id, "scoregate.prompt": _clip(result.prompt)},
        assessments=_assessments(result, trace_id, stamp),
    )
    otel_trace = base64.b64encode(bytes.fromhex(trace_id[3:])).decode()
    span_id = base64.b64encode(bytes.fromhex(trace_id[3:19])).decode()
    span = Span.from_dict({
        "trace_id": otel_trace, "span_id": span_id, "parent_span_id": None, "name": result.prompt or "item",
        "start_time_unix_nano": stamp * 1_000_000, "end_time_unix_nano": (stamp + duration) * 1_000_000,
        "events": [], "links": [],
        "status": {"code": "STATUS_CODE_OK" if result.error is None else "STATUS_CODE_ERROR",
                   "message": result.error or ""},
        "attributes": {"mlflow.traceRequestId": _json(trace_id), "mlflow.spanType": _json("CHAIN"),
                       "mlflow.spanInputs": inputs, "mlflow.spanOutputs": outputs},
    })  # fmt: skip
    return info, span


def _batches(results: Iterable[ItemResult], size: int) -> Iterable[list[ItemResult]]:
    batch: list[ItemResult] = []
    for result in results:
        batch.append(result)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def log_item_rows(store: RunStore, *, project_root: Path, mlflow_run_id: str | None = None) -> int:
    """Write every item of a mirrored run as an MLflow evaluation row (replacing earlier ones); return the count."""
    from scoregate.sinks.mlflow.client import tracking_client, tracking_uri

    mlflow_run_id = mlflow_run_id or store.links.get("mlflow_run_id")
    if not mlflow_run_id:
        raise ValueError(f"run {store.run_id} is not mirrored to MLflow yet; run `scoregate mlflow-sync` first")
    client = tracking_client(tracking_uri(project_root))
    experiment_id = client.get_run(mlflow_run_id).info.experiment_id
    backend = client._tracking_client.store  # the tracking store: one write per trace, spans in batches
    stamp = int(time.time() * 1000)
    count = 0
    for batch in _batches(store.iter_results(), BATCH):
        client.delete_traces(experiment_id, trace_ids=[trace_id_of(store.run_id, r.item_id) for r in batch])
        spans = []
        for result in batch:
            info, span = _row(result, store.run_id, mlflow_run_id, experiment_id, stamp)
            backend.start_trace(info)
            spans.append(span)
        backend.log_spans(experiment_id, spans)
        count += len(batch)
    client.set_tag(mlflow_run_id, ROWS_TAG, str(count))
    return count
