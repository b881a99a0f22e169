"""How a v4 server reads its dashboards: a trace's tags, version and name come from its root span; widgets over scores.

Recorded on v4.16 (shared/data/langfuse-recordings/v4.16-dashboard-read-path): in the v4 events tables a
trace's tags and version are those of its root span (`parent_span_id = ''`), not a merge over its spans (the
legacy traces table, and GET /api/public/traces/{id}, merge them); a widget's `tags` dimension groups by the
whole tag array (`any(traces.tags) ... GROUP BY tags`), so each distinct tag set is one group; a filter
`tags any of [...]` is `hasAny([...], traces.tags)`. A score view joins the traces (INNER JOIN: a score
whose trace has no root span drops out) only when a dimension or filter reads a trace field. Other
dimensions (`name`, `traceName`, `traceVersion`, `environment`, ...) group by value; the trace's name is its
root span's `langfuse.trace.name`, else the root span's own name.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Callable
from typing import Any

from .storage import State, parse_time

SCORE_VIEWS = {
    "scores-numeric": ("NUMERIC", "BOOLEAN"),  # the server counts boolean scores as numeric
    "scores-boolean": ("BOOLEAN",),
    "scores-categorical": ("CATEGORICAL",),
}
SCORE_FIELDS = {
    "name": "name",
    "source": "source",
    "dataType": "dataType",
    "environment": "environment",
    "configId": "configId",
    "traceId": "traceId",
    "observationId": "observationId",
    "value": "value",
}
TRACE_FIELDS = ("tags", "traceVersion", "traceName", "userId", "sessionId", "traceRelease")
TIME_SERIES = ("LINE_TIME_SERIES", "AREA_TIME_SERIES", "BAR_TIME_SERIES")
AGGREGATIONS: dict[str, Callable[[list[float]], float]] = {
    "avg": statistics.fmean,
    "sum": sum,
    "min": min,
    "max": max,
    "count": len,
}


class UnsupportedQuery(ValueError):
    """A widget asks for a view, field, operator or aggregation this fake does not evaluate."""


def root_trace(state: State, trace_id: str | None) -> dict[str, Any] | None:
    """The trace as v4 dashboards see it: the fields of its root span (the last one stored), or None."""
    roots = [s for s in state.spans if s["traceId"] == trace_id and s["parentSpanId"] is None]
    if not roots:
        return None
    root = roots[-1]
    attrs = root["attributes"]
    return {
        "tags": tuple(attrs.get("langfuse.trace.tags") or ()),
        "traceVersion": attrs.get("langfuse.version") or "",
        "traceName": attrs.get("langfuse.trace.name") or root["name"],
        "userId": attrs.get("user.id") or "",
        "sessionId": attrs.get("session.id") or "",
        "traceRelease": attrs.get("langfuse.release") or "",
    }


def _field(score: dict[str, Any], trace: dict[str, Any] | None, name: str) -> Any:
    if name in SCORE_FIELDS:
        return score[SCORE_FIELDS[name]]
    if name in TRACE_FIELDS:
        assert trace is not None
        return trace[name]
    raise UnsupportedQuery(f"field {name!r}")


def _matches(value: Any, condition: dict[str, Any]) -> bool:
    operator, wanted = condition["operator"], condition.get("value")
    if condition.get("type") == "arrayOptions":
        held = set(value)
        if operator == "any of":
            return bool(held & set(wanted))  # hasAny(wanted, traces.tags)
        if operator == "all of":
            return set(wanted) <= held
        if operator == "none of":
            return not held & set(wanted)
    elif condition.get("type") == "stringOptions":
        if operator == "any of":
            return value in wanted
        if operator == "none of":
            return value not in wanted
    elif operator == "=":
        return bool(value == wanted)
    elif operator == "!=":
        return bool(value != wanted)
    raise UnsupportedQuery(f"filter {condition}")


def widget_rows(state: State, widget: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluate a stored widget's query over the stored scores and root spans, as a v4 server draws it.

    One row per group: each dimension's value (`tags` as a tuple: the whole array), `time` (the score's day)
    for time-series charts, and `<agg>_<measure>` (e.g. `avg_value`). No rows means the chart shows no data.
    """
    view = widget["view"]
    if view not in SCORE_VIEWS:
        raise UnsupportedQuery(f"view {view!r}")
    dimensions = [d["field"] for d in widget.get("dimensions") or []]
    filters = widget.get("filters") or []
    joins_traces = any(f in TRACE_FIELDS for f in [*dimensions, *(c["column"] for c in filters)])
    groups: dict[tuple[Any, ...], list[float]] = {}
    for score in state.scores:
        if score["dataType"] not in SCORE_VIEWS[view]:
            continue
        trace = root_trace(state, score["traceId"]) if joins_traces else None
        if joins_traces and trace is None:
            continue
        if not all(_matches(_field(score, trace, c["column"]), c) for c in filters):
            continue
        key = tuple(_field(score, trace, d) for d in dimensions)
        if widget["chartType"] in TIME_SERIES:
            key += (parse_time(score["timestamp"]).astimezone(dt.UTC).date().isoformat(),)
        groups.setdefault(key, []).append(float(score["value"]))
    rows = []
    for key, values in groups.items():
        row: dict[str, Any] = dict(zip(dimensions, key, strict=False))
        if widget["chartType"] in TIME_SERIES:
            row["time"] = key[-1]
        for metric in widget["metrics"]:
            if metric["agg"] not in AGGREGATIONS or metric["measure"] not in ("value", "count"):
                raise UnsupportedQuery(f"metric {metric}")
            row[f"{metric['agg']}_{metric['measure']}"] = AGGREGATIONS[metric["agg"]](values)
        rows.append(row)
    return rows
