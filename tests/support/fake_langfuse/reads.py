"""Read endpoints over what the fake stored: scores (v3 for SDK 5, v2 for SDK 4) and observations from spans."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from .rule_runner import observations_admitted
from .storage import ApiProblem, State, iso, page_of

if TYPE_CHECKING:
    from .endpoints import Call

V3_SCORE_FILTERS = {
    "limit",
    "cursor",
    "fields",
    "id",
    "name",
    "source",
    "dataType",
    "environment",
    "configId",
    "queueId",
    "authorUserId",
    "value",
    "valueMin",
    "valueMax",
    "traceId",
    "sessionId",
    "observationId",
    "experimentId",
    "fromTimestamp",
    "toTimestamp",
}


def _v3_score(score: dict[str, Any], groups: set[str]) -> dict[str, Any]:
    """Shape a stored score as GET /api/public/v3/scores returns it."""
    value = bool(score["value"]) if score["dataType"] == "BOOLEAN" else score["value"]
    row = {
        key: score[key]
        for key in (
            "id",
            "projectId",
            "name",
            "source",
            "timestamp",
            "environment",
            "createdAt",
            "updatedAt",
            "dataType",
        )
    }
    row["value"] = value
    if "details" in groups:
        row.update(comment=score["comment"], configId=score["configId"], metadata=score["metadata"])
    if "annotation" in groups:
        row.update(authorUserId=score["authorUserId"], queueId=score["queueId"])
    if "subject" in groups:
        if score["observationId"]:
            row["subject"] = {"kind": "observation", "id": score["observationId"], "traceId": score["traceId"]}
        elif score["traceId"]:
            row["subject"] = {"kind": "trace", "id": score["traceId"]}
        elif score["sessionId"]:
            row["subject"] = {"kind": "session", "id": score["sessionId"]}
        else:
            row["subject"] = {"kind": "experiment", "id": score["datasetRunId"]}
    return row


def get_scores_v3(call: Call) -> tuple[int, Any]:
    """GET /api/public/v3/scores (SDK 5's `scores.get_many`); unknown query keys answer 400 like the server."""
    unknown = sorted(set(call.params) - V3_SCORE_FILTERS)
    if unknown:
        quoted = ", ".join(f'"{k}"' for k in unknown)
        return 400, {
            "message": "Invalid request data",
            "error": [
                {"code": "unrecognized_keys", "keys": unknown, "path": [], "message": f"Unrecognized key: {quoted}"}
            ],
        }
    limit = call.int_param("limit", 50)
    if not 1 <= limit <= 100:
        raise ApiProblem(400, "limit must be between 1 and 100", error="InvalidRequestError")
    filters = {
        "id": "id",
        "name": "name",
        "traceId": "traceId",
        "observationId": "observationId",
        "sessionId": "sessionId",
        "experimentId": "datasetRunId",
        "environment": "environment",
        "dataType": "dataType",
        "source": "source",
    }
    rows = call.state.scores
    for param, key in filters.items():
        if param in call.params:
            wanted = {v.upper() if param in ("dataType", "source") else v for v in call.params[param].split(",")}
            rows = [s for s in rows if s[key] in wanted]
    groups = set(filter(None, call.params.get("fields", "").split(",")))
    rows = sorted(rows, key=lambda s: s["timestamp"], reverse=True)[:limit]
    return 200, {"data": [_v3_score(s, groups) for s in rows], "meta": {"limit": limit}}


def _trace_facts(state: State, trace_id: str | None) -> dict[str, Any]:
    """Return userId, sessionId, tags and environment of a trace, read from its spans."""
    attrs: dict[str, Any] = {}
    for span in state.spans:
        if span["traceId"] == trace_id:
            attrs = {**span["attributes"], **attrs}
    return {
        "userId": attrs.get("user.id"),
        "tags": attrs.get("langfuse.trace.tags", []),
        "environment": attrs.get("langfuse.environment", "default"),
        "sessionId": attrs.get("session.id"),
    }


def get_trace(call: Call, trace_id: str) -> tuple[int, Any]:
    """GET /api/public/traces/{id}: the trace assembled from its spans (trace-level attributes of every span)."""
    trace = call.state.trace(trace_id)
    observations = [row for row in _observation_rows(call.state) if row["traceId"] == trace_id]
    scores = [s for s in call.state.scores if s["traceId"] == trace_id]
    return 200, {**trace, "scores": scores, "observations": observations}


def get_scores_v2(call: Call) -> tuple[int, Any]:
    """GET /api/public/v2/scores (SDK 4's legacy read): numeric `value` plus `stringValue`."""
    rows = [s for s in call.state.scores if call.params.get("traceId") in (None, s["traceId"])]
    shaped = []
    for score in sorted(rows, key=lambda s: s["timestamp"], reverse=True):
        value: Any = score["value"]
        text: str | None = None
        if score["dataType"] == "BOOLEAN":
            text = str(bool(value))
        elif isinstance(value, str):
            value, text = 0, value
        shaped.append(
            {
                **{k: v for k, v in score.items() if k != "value"},
                "value": value,
                "stringValue": text,
                "executionTraceId": None,
                "trace": _trace_facts(call.state, score["traceId"]),
            }
        )
    return 200, page_of(shaped, call.int_param("page", 1), call.int_param("limit", 50))


def _nanos_iso(nanos: int) -> str:
    return iso(dt.datetime.fromtimestamp(nanos / 1e9, dt.UTC))


OBSERVATIONS_MAX_LIMIT = 1000
"""The v2 observations API's page: `limit` 1..1000, default 50 (the SDK's `observations.get_many`)."""


def get_observations(call: Call) -> tuple[int, Any]:
    """GET /api/public/v2/observations?traceId=&name=&type=&limit=&cursor=: observations built from the stored
    spans, newest first, a page at a time; `meta.cursor` (opaque base64url JSON) only while more rows remain."""
    rows, admitted = [], observations_admitted(call.state, call.params)  # `filter` and `fromStartTime`
    for row in _observation_rows(call.state):
        wanted = {"traceId": row["traceId"], "name": row["name"], "type": row["type"]}
        if all(call.params.get(k) in (None, v) for k, v in wanted.items()) and (
            admitted is None or row["id"] in admitted
        ):
            rows.append(row)
    limit = call.int_param("limit", 50)
    if not 1 <= limit <= OBSERVATIONS_MAX_LIMIT:
        raise ApiProblem(400, f"limit must be between 1 and {OBSERVATIONS_MAX_LIMIT}", error="InvalidRequestError")
    start = _observation_cursor(call.params.get("cursor"))
    page = rows[start : start + limit]
    meta = {"cursor": _encode_offset(start + limit)} if start + limit < len(rows) else {}
    return 200, {"data": page, "meta": meta}


def _observation_cursor(text: str | None) -> int:
    """The row a cursor starts at (0 without one); a cursor the fake did not make is a 400."""
    if text is None:
        return 0
    try:
        cursor = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        raise ApiProblem(400, "Invalid cursor", error="InvalidRequestError") from None
    if not isinstance(cursor, dict) or not isinstance(cursor.get("offset"), int) or cursor["offset"] < 0:
        raise ApiProblem(400, "Invalid cursor", error="InvalidRequestError")
    return int(cursor["offset"])


def _encode_offset(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode().rstrip("=")


def _observation_rows(state: State) -> list[dict[str, Any]]:
    """Every stored span as an observation row, newest first."""
    rows = []
    for span in sorted(state.spans, key=lambda s: s["startTimeUnixNano"], reverse=True):
        attrs, facts = span["attributes"], _trace_facts(state, span["traceId"])
        kind = str(attrs.get("langfuse.observation.type", "span")).upper()
        row = {
            "id": span["spanId"],
            "traceId": span["traceId"],
            "startTime": _nanos_iso(span["startTimeUnixNano"]),
            "endTime": _nanos_iso(span["endTimeUnixNano"]),
            "projectId": state.project_id,
            "parentObservationId": span["parentSpanId"],
            "type": kind,
            "name": span["name"],
            "level": attrs.get("langfuse.observation.level", "ERROR" if span["status"]["code"] == 2 else "DEFAULT"),
            "statusMessage": attrs.get("langfuse.observation.status_message", span["status"]["message"]),
            "version": attrs.get("langfuse.version", ""),
            "environment": facts["environment"],
            "latency": round((span["endTimeUnixNano"] - span["startTimeUnixNano"]) / 1e9, 3),
            "timeToFirstToken": None,
            "userId": facts["userId"],
            "sessionId": facts["sessionId"],
            "isRootObservation": span["parentSpanId"] is None,
            "bookmarked": False,
            "public": False,
            "modelId": None,
            "inputPrice": None,
            "outputPrice": None,
            "totalPrice": None,
        }
        rows.append(row)
    return rows
