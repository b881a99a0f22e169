"""Score configs, dashboards with widgets and placements, annotation queues: as recorded on a v4.16 server.

Recorded behaviour (shared/data/langfuse-recordings/langfuse-v4.16-configs-dashboards.jsonl): a config name
may be used twice (a new id each time); type, range and categories are fixed after creation; boolean
configs get the categories True/False; widget views are observations and scores-* (no traces); a
placement takes `widgetId` and optional x/y/width/height (defaults 0, below the others, 6, 6); the
dashboard GET shows its placements under `definition.widgets`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from .storage import ApiProblem, cuid, iso, page_of
from .validation import validate_body

if TYPE_CHECKING:
    from .endpoints import Call


def _invalid_body(errors: list[str]) -> ApiProblem:
    """The dashboards API's 400 shape (`code: invalid_body`, `details.issues`)."""
    problem = ApiProblem(400, "Invalid request body")
    problem.body = {
        "message": "Invalid request body",
        "code": "invalid_body",
        "details": {"issues": [{"code": "custom", "path": [], "message": e} for e in errors]},
    }
    return problem


def _checked(call: Call, model: str, *, dashboards: bool = False) -> dict[str, Any]:
    """Validate the body against the SDK model; answer 400 in the API's own shape."""
    from .endpoints import InvalidBody

    _, errors = validate_body(model, call.body)
    if errors:
        if dashboards:
            call.rejected.append(InvalidBody(model, errors))
            raise _invalid_body(errors)
        raise InvalidBody(model, errors)
    return dict(call.body)


def _found(rows: dict[str, dict[str, Any]], key: str, what: str) -> dict[str, Any]:
    if key not in rows:
        raise ApiProblem(404, f"{what} not found")
    return rows[key]


# ---- score configs ------------------------------------------------------------------------------
def post_score_config(call: Call) -> tuple[int, Any]:
    """POST /api/public/score-configs: always a new config (names are not unique on the server)."""
    body = _checked(call, "CreateScoreConfigRequest")
    data_type = body["dataType"]
    categories = body.get("categories")
    if data_type == "BOOLEAN":
        categories = [{"label": "True", "value": 1}, {"label": "False", "value": 0}]
    elif data_type == "CATEGORICAL" and not categories:
        raise ApiProblem(400, "Categorical score configs need at least one category", error="InvalidRequestError")
    now = iso()
    row = {
        "id": str(uuid.uuid4()), "name": body["name"], "isArchived": False, "description": body.get("description"),
        "createdAt": now, "updatedAt": now, "projectId": call.state.project_id,
        "maxValue": body.get("maxValue") if data_type == "NUMERIC" else None,
        "minValue": body.get("minValue") if data_type == "NUMERIC" else None,
        "dataType": data_type, "categories": categories if data_type != "NUMERIC" else None,
    }  # fmt: skip
    call.state.score_configs[row["id"]] = row
    return 200, row


def list_score_configs(call: Call) -> tuple[int, Any]:
    """GET /api/public/score-configs: newest first."""
    rows = sorted(call.state.score_configs.values(), key=lambda r: r["createdAt"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_score_config(call: Call, config_id: str) -> tuple[int, Any]:
    """GET /api/public/score-configs/{id}."""
    return 200, _found(call.state.score_configs, config_id, "Score config")


def patch_score_config(call: Call, config_id: str) -> tuple[int, Any]:
    """PATCH /api/public/score-configs/{id}: description and archive state (type and range stay)."""
    body = _checked(call, "UpdateScoreConfigRequest")
    row = _found(call.state.score_configs, config_id, "Score config")
    fixed = [k for k in ("dataType", "minValue", "maxValue", "categories") if k in body and body[k] != row.get(k)]
    if fixed:
        raise ApiProblem(400, f"Cannot change {', '.join(fixed)} of a score config", error="InvalidRequestError")
    for key in ("description", "isArchived", "name"):
        if key in body:
            row[key] = body[key]
    row["updatedAt"] = iso()
    return 200, row


def config_errors(call: Call, body: dict[str, Any]) -> list[str]:
    """The server's check of a score against the config it names (configId)."""
    config_id = body.get("configId")
    if not config_id:
        return []
    config = call.state.score_configs.get(config_id)
    if config is None:
        return [f"configId: no score config {config_id}"]
    value, errors = body.get("value"), []
    if config["isArchived"]:
        errors.append("configId: the score config is archived")
    if body.get("dataType") not in (None, config["dataType"]):
        errors.append(f"dataType: {body.get('dataType')} does not match the config's {config['dataType']}")
    if config["dataType"] == "NUMERIC" and isinstance(value, int | float):
        low, high = config["minValue"], config["maxValue"]
        if (low is not None and value < low) or (high is not None and value > high):
            errors.append(f"value: {value} is outside the config's range {low}..{high}")
    if config["dataType"] == "CATEGORICAL" and value not in {c["label"] for c in config["categories"] or []}:
        errors.append(f"value: {value!r} is not a category of the config")
    return errors


# ---- dashboard widgets ----------------------------------------------------------------------------
def _widget(call: Call, body: dict[str, Any], row: dict[str, Any] | None = None) -> dict[str, Any]:
    now = iso()
    row = row or {"id": cuid(), "createdAt": now}
    row.update({k: v for k, v in body.items() if v is not None})
    row.setdefault("description", "")
    row["chartConfig"] = {"type": row["chartType"], **(body.get("chartConfig") or {})}
    row["updatedAt"] = now
    return row


def post_widget(call: Call) -> tuple[int, Any]:
    """POST /api/public/unstable/dashboard-widgets."""
    row = _widget(call, _checked(call, "CreateDashboardWidgetRequest", dashboards=True))
    call.state.widgets[row["id"]] = row
    return 200, row


def list_widgets(call: Call) -> tuple[int, Any]:
    """GET /api/public/unstable/dashboard-widgets."""
    rows = sorted(call.state.widgets.values(), key=lambda r: r["createdAt"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_widget(call: Call, widget_id: str) -> tuple[int, Any]:
    """GET /api/public/unstable/dashboard-widgets/{id}."""
    return 200, _found(call.state.widgets, widget_id, "Widget")


def patch_widget(call: Call, widget_id: str) -> tuple[int, Any]:
    """PATCH /api/public/unstable/dashboard-widgets/{id}."""
    body = _checked(call, "UpdateDashboardWidgetRequest", dashboards=True)
    return 200, _widget(call, body, _found(call.state.widgets, widget_id, "Widget"))


def delete_widget(call: Call, widget_id: str) -> tuple[int, Any]:
    """DELETE /api/public/unstable/dashboard-widgets/{id}: refused while a dashboard places it."""
    _found(call.state.widgets, widget_id, "Widget")
    for dashboard in call.state.dashboards.values():
        if any(p.get("widgetId") == widget_id for p in dashboard["definition"]["widgets"]):
            raise ApiProblem(400, "Widget is placed on a dashboard", error="InvalidRequestError")
    del call.state.widgets[widget_id]
    return 200, {"success": True}


# ---- dashboards and placements ----------------------------------------------------------------------
def post_dashboard(call: Call) -> tuple[int, Any]:
    """POST /api/public/unstable/dashboards."""
    body = _checked(call, "CreateDashboardRequest", dashboards=True)
    now = iso()
    row = {"id": cuid(), "createdAt": now, "updatedAt": now, "name": body["name"],
           "description": body.get("description") or "", "definition": {"widgets": []},
           "filters": body.get("filters") or []}  # fmt: skip
    call.state.dashboards[row["id"]] = row
    return 200, row


def list_dashboards(call: Call) -> tuple[int, Any]:
    """GET /api/public/unstable/dashboards."""
    rows = sorted(call.state.dashboards.values(), key=lambda r: r["createdAt"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_dashboard(call: Call, dashboard_id: str) -> tuple[int, Any]:
    """GET /api/public/unstable/dashboards/{id}: with its placements."""
    return 200, _found(call.state.dashboards, dashboard_id, "Dashboard")


def patch_dashboard(call: Call, dashboard_id: str) -> tuple[int, Any]:
    """PATCH /api/public/unstable/dashboards/{id}: name, description, filters."""
    body = _checked(call, "UpdateDashboardRequest", dashboards=True)
    row = _found(call.state.dashboards, dashboard_id, "Dashboard")
    for key in ("name", "description", "filters", "definition"):
        if body.get(key) is not None:
            row[key] = body[key]
    row["updatedAt"] = iso()
    return 200, row


def post_placement(call: Call, dashboard_id: str) -> tuple[int, Any]:
    """POST /api/public/unstable/dashboards/{id}/placements: a widget tile (defaults as recorded)."""
    row = _found(call.state.dashboards, dashboard_id, "Dashboard")
    body = _checked(call, "CreateDashboardPlacementRequest", dashboards=True)  # {type: widget|preset, ...}
    if body.get("type", "widget") != "widget":
        raise _invalid_body(["type: the fake places widgets only"])
    _found(call.state.widgets, body["widgetId"], "Widget")
    tiles = row["definition"]["widgets"]
    below = max((t["y"] + t["height"] for t in tiles), default=0)
    tile = {"type": "widget", "widgetId": body["widgetId"], "id": body.get("id") or str(uuid.uuid4()),
            "x": body.get("x", 0) if body.get("x") is not None else 0,
            "y": body["y"] if body.get("y") is not None else below,
            "width": body.get("width") or 6, "height": body.get("height") or 6}  # fmt: skip
    tiles.append(tile)
    row["updatedAt"] = iso()
    return 200, tile


def patch_placement(call: Call, dashboard_id: str, placement_id: str) -> tuple[int, Any]:
    """PATCH /api/public/unstable/dashboards/{id}/placements/{placementId}: move or resize a tile."""
    row = _found(call.state.dashboards, dashboard_id, "Dashboard")
    body = _checked(call, "UpdateDashboardPlacementRequest", dashboards=True)
    tiles = {t["id"]: t for t in row["definition"]["widgets"]}
    tile = _found(tiles, placement_id, "Placement")
    tile.update({k: v for k, v in body.items() if v is not None})
    return 200, tile


def delete_placement(call: Call, dashboard_id: str, placement_id: str) -> tuple[int, Any]:
    """DELETE /api/public/unstable/dashboards/{id}/placements/{placementId}."""
    row = _found(call.state.dashboards, dashboard_id, "Dashboard")
    _found({t["id"]: t for t in row["definition"]["widgets"]}, placement_id, "Placement")
    row["definition"]["widgets"] = [t for t in row["definition"]["widgets"] if t["id"] != placement_id]
    return 200, {"success": True}


# ---- annotation queues --------------------------------------------------------------------------
def post_queue(call: Call) -> tuple[int, Any]:
    """POST /api/public/annotation-queues: its score configs must exist."""
    body = _checked(call, "CreateAnnotationQueueRequest")
    unknown = [c for c in body["scoreConfigIds"] if c not in call.state.score_configs]
    if unknown:
        raise ApiProblem(400, f"Score configs not found: {', '.join(unknown)}", error="InvalidRequestError")
    now = iso()
    row = {"id": cuid(), "name": body["name"], "description": body.get("description"),
           "scoreConfigIds": body["scoreConfigIds"], "createdAt": now, "updatedAt": now}  # fmt: skip
    call.state.queues[row["id"]] = row
    return 200, row


def list_queues(call: Call) -> tuple[int, Any]:
    """GET /api/public/annotation-queues."""
    rows = sorted(call.state.queues.values(), key=lambda r: r["createdAt"], reverse=True)
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


def get_queue(call: Call, queue_id: str) -> tuple[int, Any]:
    """GET /api/public/annotation-queues/{id}."""
    return 200, _found(call.state.queues, queue_id, "Annotation queue")


def post_queue_item(call: Call, queue_id: str) -> tuple[int, Any]:
    """POST /api/public/annotation-queues/{id}/items: one trace (or observation, session) to rate."""
    _found(call.state.queues, queue_id, "Annotation queue")
    body = _checked(call, "CreateAnnotationQueueItemRequest")
    now = iso()
    row = {"id": cuid(), "queueId": queue_id, "objectId": body["objectId"], "objectType": body["objectType"],
           "status": body.get("status") or "PENDING", "completedAt": None,
           "createdAt": now, "updatedAt": now}  # fmt: skip
    call.state.queue_items.append(row)
    return 200, row


def list_queue_items(call: Call, queue_id: str) -> tuple[int, Any]:
    """GET /api/public/annotation-queues/{id}/items."""
    _found(call.state.queues, queue_id, "Annotation queue")
    rows = [r for r in call.state.queue_items if r["queueId"] == queue_id]
    return 200, page_of(rows, call.int_param("page", 1), call.int_param("limit", 50))


PATHS: list[tuple[str, dict[str, Any]]] = [
    ("/api/public/score-configs", {"GET": list_score_configs, "POST": post_score_config}),
    ("/api/public/score-configs/{}", {"GET": get_score_config, "PATCH": patch_score_config}),
    ("/api/public/unstable/dashboard-widgets", {"GET": list_widgets, "POST": post_widget}),
    ("/api/public/unstable/dashboard-widgets/{}", {"GET": get_widget, "PATCH": patch_widget, "DELETE": delete_widget}),
    ("/api/public/unstable/dashboards", {"GET": list_dashboards, "POST": post_dashboard}),
    ("/api/public/unstable/dashboards/{}", {"GET": get_dashboard, "PATCH": patch_dashboard}),
    ("/api/public/unstable/dashboards/{}/placements", {"POST": post_placement}),
    ("/api/public/unstable/dashboards/{}/placements/{}", {"PATCH": patch_placement, "DELETE": delete_placement}),
    ("/api/public/annotation-queues", {"GET": list_queues, "POST": post_queue}),
    ("/api/public/annotation-queues/{}", {"GET": get_queue}),
    ("/api/public/annotation-queues/{}/items", {"GET": list_queue_items, "POST": post_queue_item}),
]
