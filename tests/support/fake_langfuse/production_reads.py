"""Listing production traffic: GET /api/public/v2/observations (both SDK majors' `api.observations.get_many`) with its
field groups, query filters, structured `filter` and cursor, and GET /api/public/traces (SDK 4's `api.trace.list`).

Faithful to the recorded v4.16 answers (langfuse-recordings, `read_back_trace_and_scores`): without `fields` an
observation row has the recorded keys (core, basic and the price columns); with `fields` it has `core` plus the
groups asked for, as the SDK's `ObservationV2` names them. Input and output come back as the raw JSON text the SDK
sent (the API reference: "Input/output fields are always returned as raw strings"). A generation is linked to
the prompt version its span names (`langfuse.observation.prompt.name`/`.version`); `promptId` is that version's id
when the fake holds the prompt. Rows are newest first; the cursor is opaque (base64 of the next offset).
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from .reads import _observation_rows, _trace_facts
from .storage import ApiProblem, State, page_of, parse_time

if TYPE_CHECKING:
    from .endpoints import Call

GROUPS = ("core", "basic", "time", "io", "metadata", "model", "usage", "prompt", "metrics", "trace_context")
CORE = ("id", "traceId", "startTime", "endTime", "projectId", "parentObservationId", "type")
BASIC = (
    "name",
    "level",
    "statusMessage",
    "version",
    "environment",
    "bookmarked",
    "public",
    "userId",
    "sessionId",
    "isRootObservation",
)
QUERY_FILTERS = {
    "name": "name",
    "userId": "userId",
    "sessionId": "sessionId",
    "type": "type",
    "traceId": "traceId",
    "level": "level",
    "parentObservationId": "parentObservationId",
    "environment": "environment",
    "version": "version",
}
FILTER_COLUMNS = {
    "id": "id",
    "type": "type",
    "name": "name",
    "traceId": "traceId",
    "startTime": "startTime",
    "endTime": "endTime",
    "environment": "environment",
    "level": "level",
    "version": "version",
    "userId": "userId",
    "sessionId": "sessionId",
    "isRootObservation": "isRootObservation",
    "traceName": "traceName",
    "traceTags": "tags",
    "tags": "tags",
    "model": "model",
    "promptName": "promptName",
    "promptVersion": "promptVersion",
    "metadata": "metadata",
}
MAX_LIMIT = 1000
TRACE_METADATA = "langfuse.trace.metadata."


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _metadata(attrs: dict[str, Any]) -> dict[str, Any]:
    """The observation's metadata: one attribute per key (SDK 5) or one JSON object (SDK 4), values as sent."""
    found: dict[str, Any] = {}
    whole = attrs.get("langfuse.observation.metadata")
    if isinstance(whole, str) and isinstance(_decoded(whole), dict):
        found.update(_decoded(whole))
    prefix = "langfuse.observation.metadata."
    found.update({k.removeprefix(prefix): v for k, v in attrs.items() if k.startswith(prefix)})
    return found


def _prompt_id(state: State, name: Any, version: Any) -> str | None:
    return next((p["id"] for p in state.prompts.get(str(name), []) if p["version"] == version), None)


def _trace_attributes(state: State) -> dict[str, dict[str, Any]]:
    """Per trace, the attributes of all its spans (the first span's value wins, as `_trace_facts` reads them)."""
    found: dict[str, dict[str, Any]] = {}
    for span in state.spans:
        found[span["traceId"]] = {**span["attributes"], **found.get(span["traceId"], {})}
    return found


def _full_row(state: State, row: dict[str, Any], span: dict[str, Any], trace_attrs: dict[str, Any]) -> dict[str, Any]:
    """Every field group of one observation, keyed as `ObservationV2` names them."""
    attrs = span["attributes"]
    version = attrs.get("langfuse.observation.prompt.version")
    prompt_name = attrs.get("langfuse.observation.prompt.name")
    usage = _decoded(attrs.get("langfuse.observation.usage_details")) or {}
    cost = _decoded(attrs.get("langfuse.observation.cost_details")) or {}
    return {
        **row,
        "completionStartTime": _decoded(attrs.get("langfuse.observation.completion_start_time")),
        "createdAt": row["startTime"],
        "updatedAt": row["endTime"],
        "input": attrs.get("langfuse.observation.input"),
        "output": attrs.get("langfuse.observation.output"),
        "metadata": _metadata(attrs),
        "model": attrs.get("langfuse.observation.model.name"),
        "internalModelId": None,
        "modelParameters": _decoded(attrs.get("langfuse.observation.model.parameters")),
        "usageDetails": usage,
        "costDetails": cost,
        "totalCost": cost.get("total"),
        "usagePricingTierName": None,
        "promptId": _prompt_id(state, prompt_name, version) if prompt_name else None,
        "promptName": prompt_name,
        "promptVersion": int(version) if version is not None else None,
        "tags": list(trace_attrs.get("langfuse.trace.tags", [])),
        "release": trace_attrs.get("langfuse.release"),
        "traceName": trace_attrs.get("langfuse.trace.name"),
        "traceMetadata": {
            k.removeprefix(TRACE_METADATA): v for k, v in trace_attrs.items() if k.startswith(TRACE_METADATA)
        },  # filtered on (a `metadata` condition reads the observation's, then its trace's); never returned
    }


GROUP_FIELDS = {
    "core": CORE,
    "basic": BASIC,
    "time": ("completionStartTime", "createdAt", "updatedAt"),
    "io": ("input", "output"),
    "metadata": ("metadata",),
    "model": ("model", "internalModelId", "modelParameters"),
    "usage": ("usageDetails", "costDetails", "totalCost", "usagePricingTierName"),
    "prompt": ("promptId", "promptName", "promptVersion"),
    "metrics": ("latency", "timeToFirstToken"),
    "trace_context": ("tags", "release", "traceName"),
}


def _matches(condition: dict[str, Any], row: dict[str, Any]) -> bool:
    """Apply one condition of the structured `filter` (the types and operators the API reference lists)."""
    column = FILTER_COLUMNS.get(condition.get("column", ""))
    kind, operator, wanted = condition.get("type"), condition.get("operator"), condition.get("value")
    if column is None:
        raise ApiProblem(400, f"Invalid filter column: {condition.get('column')!r}", error="InvalidRequestError")
    value = row.get(column)
    if kind == "stringObject":  # a metadata key: `key` names it
        key = condition.get("key")
        held = (value or {}).get(key, row.get("traceMetadata", {}).get(key))
        return {"=": held == wanted, "contains": isinstance(held, str) and str(wanted) in held}.get(operator, False)
    if kind == "datetime":
        if value is None:
            return False
        moment, bound = parse_time(value), parse_time(str(wanted))
        return {">": moment > bound, "<": moment < bound, ">=": moment >= bound, "<=": moment <= bound}[operator]
    if kind == "string" and operator == "=":
        return value == wanted
    if kind in ("stringOptions", "categoryOptions"):
        return (value in wanted) == (operator == "any of")
    if kind == "arrayOptions":
        held = set(value or [])
        return {"any of": bool(held & set(wanted)), "all of": set(wanted) <= held, "none of": not held & set(wanted)}[
            operator
        ]
    if kind == "number" and value is not None:
        return {"=": value == wanted, ">": value > wanted, "<": value < wanted, ">=": value >= wanted}.get(
            operator, value <= wanted
        )
    if kind == "boolean":
        return (value == wanted) == (operator == "=")
    if kind == "null":
        return (value is None) == (operator == "is null")
    raise ApiProblem(400, f"Unsupported filter: {kind} {operator}", error="InvalidRequestError")


def _conditions(call: Call) -> list[dict[str, Any]]:
    """The structured filter when given (it takes precedence), else the query parameters as conditions."""
    if "filter" in call.params:
        try:
            parsed = json.loads(call.params["filter"])
        except ValueError:
            raise ApiProblem(400, "Invalid filter: not JSON", error="InvalidRequestError") from None
        if not isinstance(parsed, list):
            raise ApiProblem(400, "Invalid filter: expected an array", error="InvalidRequestError")
        return parsed
    conditions = [
        {"type": "string", "column": column, "operator": "=", "value": call.params[param]}
        for param, column in QUERY_FILTERS.items()
        if param in call.params
    ]
    if "isRootObservation" in call.params:
        wanted = call.params["isRootObservation"].lower() == "true"
        conditions.append({"type": "boolean", "column": "isRootObservation", "operator": "=", "value": wanted})
    for param, operator in (("fromStartTime", ">="), ("toStartTime", "<")):
        if param in call.params:
            conditions.append(
                {"type": "datetime", "column": "startTime", "operator": operator, "value": call.params[param]}
            )
    return conditions


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode())
    except ValueError:
        raise ApiProblem(400, "Invalid cursor", error="InvalidRequestError") from None


def list_observations(call: Call) -> tuple[int, Any]:
    """GET /api/public/v2/observations: filtered, newest first, `limit` (≤ 1000) per page, with a cursor."""
    if call.params.get("parseIoAsJson", "false").lower() == "true":
        raise ApiProblem(400, "parseIoAsJson is no longer supported", error="InvalidRequestError")
    limit = call.int_param("limit", 50)
    if not 1 <= limit <= MAX_LIMIT:
        raise ApiProblem(400, f"limit must be between 1 and {MAX_LIMIT}", error="InvalidRequestError")
    groups = [g for g in call.params.get("fields", "").split(",") if g]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ApiProblem(400, f"Invalid fields: {', '.join(unknown)}", error="InvalidRequestError")
    conditions = _conditions(call)
    spans = {span["spanId"]: span for span in call.state.spans}
    per_trace = _trace_attributes(call.state)
    rows = []
    for row in _observation_rows(call.state):
        full = _full_row(call.state, row, spans[row["id"]], per_trace[row["traceId"]])
        if all(_matches(c, full) for c in conditions):
            rows.append(_shaped(row, full, groups))
    start = _offset(call.params.get("cursor"))
    page = rows[start : start + limit]
    meta: dict[str, Any] = {}
    if start + limit < len(rows):
        meta["cursor"] = base64.b64encode(str(start + limit).encode()).decode()
    return 200, {"data": page, "meta": meta}


def _shaped(row: dict[str, Any], full: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    """The recorded default row without `fields`; else core plus the groups asked for."""
    if not groups:
        return row
    keys = [key for group in ("core", *groups) for key in GROUP_FIELDS[group]]
    return {key: full[key] for key in dict.fromkeys(keys)}


def list_traces(call: Call) -> tuple[int, Any]:
    """GET /api/public/traces (SDK 4's `api.trace.list`): name, tags (all of), environment, time window, paged."""
    trace_ids = list(dict.fromkeys(span["traceId"] for span in call.state.spans))
    tags = [call.params["tags"]] if "tags" in call.params else []  # the fake keeps the last of repeated keys
    rows = []
    for trace_id in trace_ids:
        trace = call.state.trace(trace_id)
        facts = _trace_facts(call.state, trace_id)
        moment = parse_time(trace["timestamp"])
        if call.params.get("name") not in (None, trace["name"]):
            continue
        if call.params.get("environment") not in (None, trace["environment"]):
            continue
        if not set(tags) <= set(trace["tags"]):
            continue
        if "fromTimestamp" in call.params and moment < parse_time(call.params["fromTimestamp"]):
            continue
        if "toTimestamp" in call.params and moment >= parse_time(call.params["toTimestamp"]):
            continue
        root = next((s for s in call.state.spans if s["traceId"] == trace_id and s["parentSpanId"] is None), None)
        attrs = root["attributes"] if root else {}
        rows.append(
            {
                **{k: v for k, v in trace.items() if k != "latency"},
                "userId": facts["userId"],
                "sessionId": facts["sessionId"],
                "input": _decoded(attrs.get("langfuse.observation.input")),
                "output": _decoded(attrs.get("langfuse.observation.output")),
                "observations": [s["spanId"] for s in call.state.spans if s["traceId"] == trace_id],
                "scores": [s["id"] for s in call.state.scores if s["traceId"] == trace_id],
                "latency": trace["latency"],
            }
        )
    rows.sort(key=lambda r: r["timestamp"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


PATHS: list[tuple[str, dict[str, Any]]] = [
    ("/api/public/v2/observations", {"GET": list_observations}),
    ("/api/public/traces", {"GET": list_traces}),
]
