"""The public API endpoints the fake serves: one function per route, each returning (status, JSON body)."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from .config_endpoints import PATHS as CONFIG_PATHS
from .config_endpoints import config_errors
from .evaluators_v2 import PATHS as EVALUATOR_PATHS
from .otlp import OtlpDecodeError, decode_spans
from .production_reads import PATHS as PRODUCTION_PATHS
from .reads import get_scores_v2, get_scores_v3, get_trace
from .rule_runner import run_rules
from .storage import ApiProblem, State, iso, page_of
from .validation import has_sdk_model, validate_body

# Exactly what Langfuse < v4.59 (recorded on v4.16) answers to the JSON array SDK 5 posts to /api/public/scores.
OLD_SERVER_ARRAY_ERROR = {
    "message": "Invalid request data",
    "error": [
        {
            "expected": "object",
            "code": "invalid_type",
            "path": [],
            "message": "Invalid input: expected object, received array",
        },
        {
            "code": "invalid_type",
            "expected": "object",
            "path": [],
            "message": "Invalid input: expected object, received array",
        },
    ],
}


class InvalidBody(Exception):
    """A request body that failed validation: answered 400 and recorded as a validation failure."""

    def __init__(self, model: str, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.model = model
        self.errors = errors


@dataclass
class Call:
    """One request as an endpoint sees it."""

    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw_body: bytes
    state: State
    server_mode: str
    public_key: str
    server_version: str = "4.16.0"
    rejected: list[InvalidBody] = field(default_factory=list)

    def valid(self, model: str, body: Any) -> Any:
        """Return `body` when the SDK model accepts it, else raise InvalidBody."""
        _, errors = validate_body(model, body)
        if errors:
            raise InvalidBody(model, errors)
        return body

    def int_param(self, name: str, default: int) -> int:
        """Return an integer query parameter, answering 400 when it is not one."""
        try:
            return int(self.params.get(name, default))
        except ValueError:
            raise ApiProblem(400, f"Invalid {name}", error="InvalidRequestError") from None


def _score_rule_errors(body: dict[str, Any]) -> list[str]:
    """Check the server's own score rules (value type per dataType, a subject to attach to)."""
    value, data_type, errors = body.get("value"), body.get("dataType"), []
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if data_type in ("NUMERIC", "BOOLEAN") and not numeric:
        errors.append(f"value: a {data_type} score needs a number")
    if data_type == "BOOLEAN" and numeric and value not in (0, 1):
        errors.append("value: a BOOLEAN score must be 0 or 1")
    if data_type in ("CATEGORICAL", "TEXT", "CORRECTION") and not isinstance(value, str):
        errors.append(f"value: a {data_type} score needs a string")
    if data_type == "TEXT" and isinstance(value, str) and not 1 <= len(value) <= 500:
        errors.append("value: a TEXT score holds 1 to 500 characters")
    if not any(body.get(k) for k in ("traceId", "sessionId", "datasetRunId")):
        errors.append("one of traceId, sessionId or datasetRunId is required")
    if body.get("observationId") and not body.get("traceId"):
        errors.append("observationId requires traceId")
    return errors


def _one_score(
    call: Call, body: Any, default_time: str | None = None, model: str = "CreateScoreRequest"
) -> dict[str, Any]:
    """Validate one score body (SDK model, then server rules) and store it."""
    call.valid(model, body)
    errors = _score_rule_errors(body) + config_errors(call, body)
    if errors:
        raise InvalidBody("CreateScoreRequest", errors)
    return call.state.add_score(body, default_time)


# ---- health, projects, datasets, items -----------------------------------------------------------
def get_health(call: Call) -> tuple[int, Any]:
    """GET /api/public/health: no credentials needed; the server's version."""
    return 200, {"status": "OK", "version": call.server_version}


def get_projects(call: Call) -> tuple[int, Any]:
    """GET /api/public/projects: the one project the keys belong to (what auth_check reads)."""
    project = {
        "id": call.state.project_id,
        "name": "Local Project",
        "organization": {"id": "local-org", "name": "Local Org"},
        "metadata": {},
    }
    return 200, {"data": [project]}


def post_dataset(call: Call) -> tuple[int, Any]:
    """POST /api/public/v2/datasets: upsert by name."""
    return 200, call.state.upsert_dataset(call.valid("CreateDatasetRequest", call.body))


def list_datasets(call: Call) -> tuple[int, Any]:
    """GET /api/public/v2/datasets."""
    rows = sorted(call.state.datasets.values(), key=lambda d: d["createdAt"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_dataset(call: Call, name: str) -> tuple[int, Any]:
    """GET /api/public/v2/datasets/{name}."""
    return 200, call.state.dataset(name)


def post_item(call: Call) -> tuple[int, Any]:
    """POST /api/public/dataset-items: upsert by id."""
    return 200, call.state.upsert_item(call.valid("CreateDatasetItemRequest", call.body))


def list_items(call: Call) -> tuple[int, Any]:
    """GET /api/public/dataset-items?datasetName=&page=&limit=: active items, newest first."""
    rows = call.state.list_items(call.params.get("datasetName"))
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_item(call: Call, item_id: str) -> tuple[int, Any]:
    """GET /api/public/dataset-items/{id}."""
    return 200, call.state.item(item_id)


def delete_item(call: Call, item_id: str) -> tuple[int, Any]:
    """DELETE /api/public/dataset-items/{id}."""
    call.state.items.pop(call.state.item(item_id)["id"])
    return 200, {"message": "Dataset item successfully deleted"}


# ---- prompts ------------------------------------------------------------------------------------
def post_prompt(call: Call) -> tuple[int, Any]:
    """POST /api/public/v2/prompts: always a new version."""
    return 201, call.state.create_prompt(call.valid("CreatePromptRequest", call.body))


def list_prompts(call: Call) -> tuple[int, Any]:
    """GET /api/public/v2/prompts?name=&label=&tag=."""
    rows = call.state.prompt_metas(call.params.get("name"), call.params.get("label"), call.params.get("tag"))
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_prompt(call: Call, name: str) -> tuple[int, Any]:
    """GET /api/public/v2/prompts/{name}?version=|label= (default label `production`)."""
    version = call.int_param("version", 0) or None
    found = call.state.prompt(name, call.params.get("label"), version)
    return 200, {**found, "isActive": "production" in found["labels"], "resolutionGraph": None}


def patch_prompt_labels(call: Call, name: str, version: str) -> tuple[int, Any]:
    """PATCH /api/public/v2/prompts/{name}/versions/{version}: add labels, move them off other versions."""
    body = call.valid("PromptLabelsPatch", call.body)
    if not version.isdigit():
        raise ApiProblem(400, f"Invalid version {version!r}", error="InvalidRequestError")
    return 200, call.state.add_labels(name, int(version), body["newLabels"])


# ---- scores -------------------------------------------------------------------------------------
def post_scores(call: Call) -> tuple[int, Any]:
    """POST /api/public/scores: one object (any server) or, on a new server (>= v4.59), an array."""
    if not isinstance(call.body, list):
        return 200, {"id": _one_score(call, call.body)["id"]}
    if call.server_mode == "old":
        return 400, OLD_SERVER_ARRAY_ERROR
    if not call.body:
        raise InvalidBody("CreateScoresRequest", ["<body>: the array needs at least one score"])
    errors = []
    for index, body in enumerate(call.body):
        try:
            _one_score(call, body, model="ArrayScore")
        except InvalidBody as exc:
            call.rejected.append(exc)
            errors.append({"message": f"score {index}: " + "; ".join(exc.errors)})
    if errors:
        return 207, {"accepted": len(call.body) - len(errors), "rejected": len(errors), "errors": errors}
    return 202, {"message": "Accepted"}


def post_ingestion(call: Call) -> tuple[int, Any]:
    """POST /api/public/ingestion (SDK 4's score path): score-create events; 207 with per-event results."""
    body = call.valid("IngestionBatch", call.body)
    event_model = has_sdk_model("IngestionEvent")
    successes, errors = [], []
    for event in body["batch"]:
        try:
            call.valid("IngestionEvent", event)
            if event.get("type") != "score-create":
                raise InvalidBody(
                    "IngestionEvent", [f"type: the fake stores only score-create, not {event.get('type')}"]
                )
            if not event_model:
                call.valid("ScoreBody", event["body"])
            _one_score(call, event["body"], default_time=event.get("timestamp"))
            successes.append({"id": event.get("id"), "status": 201})
        except InvalidBody as exc:
            call.rejected.append(exc)
            errors.append(
                {"id": event.get("id"), "status": 400, "message": "Invalid request data", "error": exc.errors}
            )
    return 207, {"successes": successes, "errors": errors}


# ---- traces (OTLP) ------------------------------------------------------------------------------
def _sdk_major(span: dict[str, Any]) -> int:
    """The major version of the Langfuse SDK that made a span (its instrumentation scope), 0 when not the SDK."""
    scope = span.get("scope") or {}
    head = str(scope.get("version") or "").split(".")[0]
    return int(head) if scope.get("name") == "langfuse-sdk" and head.isdigit() else 0


def post_otel_traces(call: Call) -> tuple[int, Any]:
    """POST /api/public/otel/v1/traces: decode and store the spans; answer the queued job like v4.16."""
    try:
        spans = decode_spans(call.raw_body, call.headers.get("content-type", ""))
    except OtlpDecodeError as exc:
        raise InvalidBody("ExportTraceServiceRequest", [str(exc)]) from None
    for span in spans:  # a new server decodes SDK 5's JSON-encoded metadata values; v4.16 keeps the text as sent
        span["decodesMetadata"] = call.server_mode == "new" and _sdk_major(span) >= 5
    call.state.spans.extend(spans)
    run_rules(call.state, spans)
    now, job_id = dt.datetime.now(dt.UTC), str(uuid.uuid4())
    scope = {"projectId": call.state.project_id, "accessLevel": "project", "orgId": "local-org"}
    payload = {
        "data": {
            "fileKey": f"events/otel/{call.state.project_id}/{now:%Y/%m/%d/%H/%M}/{job_id}.json",
            "publicKey": call.public_key,
        },
        "authCheck": {"validKey": True, "scope": scope},
        "sdkName": call.headers.get("x-langfuse-sdk-name", ""),
        "sdkVersion": call.headers.get("x-langfuse-sdk-version", ""),
        "ingestionVersion": call.headers.get("x-langfuse-ingestion-version", ""),
    }
    opts = {
        "attempts": 6,
        "removeOnComplete": True,
        "removeOnFail": 100000,
        "backoff": {"type": "exponential", "delay": 5000},
        "traceparent": f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01",
        "baggage": "",
    }
    millis = int(now.timestamp() * 1000)
    return 200, {
        "name": "otel-ingestion-job",
        "data": {"id": job_id, "timestamp": iso(now), "name": "otel-ingestion-job", "payload": payload},
        "opts": opts,
        "id": str(len(call.state.spans)),
        "progress": 0,
        "returnvalue": None,
        "stacktrace": None,
        "priority": 0,
        "attemptsStarted": 0,
        "attemptsMade": 0,
        "stalledCounter": 0,
        "timestamp": millis,
        "queueQualifiedName": "bull:otel-ingestion-queue",
    }


# ---- dataset runs (SDK 4 writes them; v4 servers show SDK 5 experiments only through spans) ------
def post_run_item(call: Call) -> tuple[int, Any]:
    """POST /api/public/dataset-run-items."""
    row = call.state.add_run_item(call.valid("CreateDatasetRunItemRequest", call.body))
    return 200, {"datasetRunName": row["datasetRunName"], **{k: v for k, v in row.items() if k != "datasetRunName"}}


def readable_run_items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run items the API shows: the newest per dataset item. The server keeps every row it was sent (each
    POST gets a new random id: 18 rows for 9 items on the recorded v4.16 server) and shows one per item."""
    newest = {r["datasetItemId"]: r for r in sorted(rows, key=lambda r: r["createdAt"])}
    return sorted(newest.values(), key=lambda r: r["createdAt"], reverse=True)


def list_run_items(call: Call) -> tuple[int, Any]:
    """GET /api/public/dataset-run-items?datasetId=&runName=."""
    runs = [
        r
        for (ds, name), r in call.state.runs.items()
        if ds == call.params.get("datasetId") and name == call.params.get("runName")
    ]
    if not runs:
        raise ApiProblem(404, "Dataset run not found for the given project and dataset id")
    rows = readable_run_items([r for r in call.state.run_items if r["datasetRunId"] == runs[0]["id"]])
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def list_runs(call: Call, dataset_name: str) -> tuple[int, Any]:
    """GET /api/public/datasets/{name}/runs."""
    dataset_id = call.state.dataset(dataset_name)["id"]
    rows = sorted(
        (r for (ds, _), r in call.state.runs.items() if ds == dataset_id), key=lambda r: r["createdAt"], reverse=True
    )
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_run(call: Call, dataset_name: str, run_name: str) -> tuple[int, Any]:
    """GET /api/public/datasets/{name}/runs/{run}."""
    run = call.state.run(dataset_name, run_name)
    return 200, {**run, "datasetRunItems": readable_run_items(run["datasetRunItems"])}


Endpoint = Callable[..., tuple[int, Any]]
_SEGMENT = "([^/]+)"
_PATHS: list[tuple[str, dict[str, Endpoint]]] = [
    ("/api/public/health", {"GET": get_health}),
    ("/api/public/projects", {"GET": get_projects}),
    ("/api/public/v2/datasets", {"GET": list_datasets, "POST": post_dataset}),
    ("/api/public/v2/datasets/{}", {"GET": get_dataset}),
    ("/api/public/dataset-items", {"GET": list_items, "POST": post_item}),
    ("/api/public/dataset-items/{}", {"GET": get_item, "DELETE": delete_item}),
    ("/api/public/v2/prompts", {"GET": list_prompts, "POST": post_prompt}),
    ("/api/public/v2/prompts/{}", {"GET": get_prompt}),
    ("/api/public/v2/prompts/{}/versions/{}", {"PATCH": patch_prompt_labels}),
    ("/api/public/scores", {"POST": post_scores}),
    ("/api/public/v3/scores", {"GET": get_scores_v3}),
    ("/api/public/v2/scores", {"GET": get_scores_v2}),
    ("/api/public/ingestion", {"POST": post_ingestion}),
    ("/api/public/otel/v1/traces", {"POST": post_otel_traces}),
    ("/api/public/traces/{}", {"GET": get_trace}),
    ("/api/public/dataset-run-items", {"GET": list_run_items, "POST": post_run_item}),
    ("/api/public/datasets/{}/runs", {"GET": list_runs}),
    ("/api/public/datasets/{}/runs/{}", {"GET": get_run}),
    *CONFIG_PATHS,
    *EVALUATOR_PATHS,
    *PRODUCTION_PATHS,
]
ROUTES = [(re.compile(path.replace("{}", _SEGMENT) + "$"), methods) for path, methods in _PATHS]


def route(path: str) -> tuple[dict[str, Endpoint], list[str]] | None:
    """Find the endpoints for a raw (still percent-encoded) path and its decoded path parameters."""
    for pattern, methods in ROUTES:
        match = pattern.match(path)
        if match:
            return methods, [unquote(g) for g in match.groups()]
    return None
