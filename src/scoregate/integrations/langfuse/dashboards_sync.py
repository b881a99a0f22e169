"""`scoregate dashboards sync`: make Langfuse's dashboards match `dashboards/*.yaml` — plan, then apply.

A dashboard and each widget are found by name (the server does not make names unique, so scoregate does);
a widget whose definition changed is patched, a new one created and placed; a tile in the wrong place is
moved. Tiles on the dashboard that the file no longer has are listed, and removed (with their widget)
only with `--prune`. A second sync with no change writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.catalog.dashboards import DashboardSpec, WidgetSpec, load_dashboards
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.canonical import canonical
from scoregate.integrations.langfuse.public_api import PublicApi

FEATURE = "dashboards"
WIDGETS = "/api/public/unstable/dashboard-widgets"
DASHBOARDS = "/api/public/unstable/dashboards"
Action = Literal["create", "update", "unchanged", "move", "extra", "remove"]


def widget_body(spec: WidgetSpec) -> dict[str, Any]:
    """The widget as the API takes it (and returns it)."""
    body: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "view": spec.view,
        "dimensions": [{"field": d} for d in spec.dimensions],
        "metrics": [m.model_dump() for m in spec.metrics],
        "filters": [f.model_dump(exclude_none=True) for f in spec.filters],
        "chartType": spec.chart,
    }
    if spec.chart_config is not None:
        body["chartConfig"] = {"type": spec.chart, **spec.chart_config}
    return body


def _same_widget(body: dict[str, Any], server: dict[str, Any]) -> bool:
    keys = [k for k in body if k != "chartConfig"]
    mine = canonical({k: body[k] for k in keys})
    theirs = canonical({k: server.get(k) if k != "description" else server.get(k) or "" for k in keys})
    if mine != theirs:
        return False
    wanted_config = body.get("chartConfig")
    return wanted_config is None or canonical(wanted_config) == canonical(server.get("chartConfig"))


@dataclass
class TileChange:
    """What the sync does to one widget and its tile."""

    widget: str
    action: Action
    widget_id: str | None = None
    placement_id: str | None = None
    body: dict[str, Any] | None = field(default=None, repr=False)
    position: dict[str, int] = field(default_factory=dict)
    moved: bool = False


@dataclass
class DashboardPlan:
    """The difference between one dashboard file and Langfuse."""

    file: str
    name: str
    action: Literal["create", "update", "unchanged"]
    dashboard_id: str | None
    patch: dict[str, Any]
    tiles: list[TileChange] = field(default_factory=list)
    url: str | None = None

    def count(self, action: Action) -> int:
        """How many widgets get `action`."""
        return sum(1 for t in self.tiles if t.action == action)

    @property
    def writes(self) -> int:
        """Requests applying the plan sends."""
        per_tile = {"create": 2, "remove": 2, "move": 1, "update": 1}
        tiles = sum(per_tile.get(t.action, 0) + (t.action == "update" and not t.placement_id) for t in self.tiles)
        return (self.action != "unchanged") + tiles


@dataclass
class DashboardSyncReport:
    """What `dashboards sync` planned and, unless dry-run, applied."""

    host: str
    plans: list[DashboardPlan]
    applied: bool
    prune: bool
    requests: int = 0


def _tile_position(spec: WidgetSpec) -> dict[str, int]:
    p = spec.placement
    return {"x": p.x, "y": p.y, "width": p.width, "height": p.height}


def plan_dashboard(
    file: str, spec: DashboardSpec, widgets: dict[str, dict[str, Any]], dashboards: dict[str, dict[str, Any]],
    *, prune: bool,
) -> DashboardPlan:  # fmt: skip
    """Compare one dashboard file with the server's widgets and dashboards (both by name); reads nothing."""
    server = dashboards.get(spec.name)
    if server is None:
        plan = DashboardPlan(file, spec.name, "create", None, {})
        tiles: dict[str, dict[str, Any]] = {}
    else:
        patch: dict[str, Any] = {}
        if (server.get("description") or "") != spec.description:
            patch["description"] = spec.description
        filters = [f.model_dump(exclude_none=True) for f in spec.filters]
        if canonical(server.get("filters") or []) != canonical(filters):
            patch["filters"] = filters
        plan = DashboardPlan(file, spec.name, "update" if patch else "unchanged", str(server["id"]), patch)
        tiles = {t["widgetId"]: t for t in server["definition"]["widgets"] if t.get("type", "widget") == "widget"}
    placed_ids = set()
    for widget in spec.widgets:
        body, position = widget_body(widget), _tile_position(widget)
        there = widgets.get(widget.name)
        if there is None:
            plan.tiles.append(TileChange(widget.name, "create", body=body, position=position))
            continue
        tile = tiles.get(there["id"])
        placed_ids.add(there["id"])
        moved = tile is not None and any(tile.get(k) != v for k, v in position.items())
        changed = not _same_widget(body, there)
        action: Action = "update" if changed or tile is None else ("move" if moved else "unchanged")
        placement = str(tile["id"]) if tile is not None else None
        plan.tiles.append(TileChange(widget.name, action, str(there["id"]), placement, body, position, moved))
    for widget_id, tile in tiles.items():
        if widget_id not in placed_ids:
            name = next((n for n, w in widgets.items() if w["id"] == widget_id), widget_id)
            plan.tiles.append(TileChange(name, "remove" if prune else "extra", widget_id, tile["id"]))
    return plan


def apply_dashboard(plan: DashboardPlan, api: PublicApi, spec: DashboardSpec) -> None:
    """Write one plan: the dashboard, its widgets, their tiles; removed tiles and widgets with --prune."""
    if plan.dashboard_id is None:
        filters = [f.model_dump(exclude_none=True) for f in spec.filters]
        created = api.call(FEATURE, f"creating dashboard {plan.name!r}", "POST", DASHBOARDS,
                           json={"name": spec.name, "description": spec.description, "filters": filters})  # fmt: skip
        plan.dashboard_id = str(created["id"])
    elif plan.patch:
        api.call(FEATURE, f"updating dashboard {plan.name!r}", "PATCH", f"{DASHBOARDS}/{plan.dashboard_id}",
                 json=plan.patch)  # fmt: skip
    placements = f"{DASHBOARDS}/{plan.dashboard_id}/placements"
    for tile in plan.tiles:
        doing = f"saving widget {tile.widget!r} of dashboard {plan.name!r}"
        if tile.action == "create":
            tile.widget_id = str(api.call(FEATURE, doing, "POST", WIDGETS, json=tile.body)["id"])
        elif tile.action == "update":
            api.call(FEATURE, doing, "PATCH", f"{WIDGETS}/{tile.widget_id}", json=tile.body)
        if tile.action in ("create", "update") and tile.placement_id is None:
            placed = api.call(
                FEATURE, doing, "POST", placements, json={"type": "widget", "widgetId": tile.widget_id, **tile.position}
            )
            tile.placement_id = str(placed["id"])
        elif tile.moved:
            api.call(FEATURE, doing, "PATCH", f"{placements}/{tile.placement_id}", json=tile.position)
        elif tile.action == "remove":
            api.call(FEATURE, f"removing widget {tile.widget!r}", "DELETE", f"{placements}/{tile.placement_id}")
            api.call(FEATURE, f"removing widget {tile.widget!r}", "DELETE", f"{WIDGETS}/{tile.widget_id}")


def _by_name(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: str(r.get("createdAt"))):  # the oldest of a name is the one kept
        found.setdefault(str(row["name"]), row)
    return found


def sync_dashboards(
    project: Project,
    names: Sequence[str] = (),
    *,
    dry_run: bool = False,
    prune: bool = False,
    api: PublicApi | None = None,
) -> DashboardSyncReport:
    """Plan every selected dashboard file against Langfuse, then (unless dry-run) apply; return the report."""
    files = load_dashboards(project.root)
    unknown = [n for n in names if n not in files]
    if unknown:
        raise ScoregateError(
            f"no dashboard {', '.join(map(repr, unknown))} in {project.root / 'dashboards'} "
            f"(found: {', '.join(sorted(files)) or 'none'})"
        )
    own = api is None
    api = api or PublicApi()
    try:
        project_id = api.project_id()
        widgets = _by_name(list(api.pages(FEATURE, "listing dashboard widgets", WIDGETS)))
        dashboards = _by_name(list(api.pages(FEATURE, "listing dashboards", DASHBOARDS)))
        plans = []
        for file in names or sorted(files):
            spec = files[file][1]
            plan = plan_dashboard(file, spec, widgets, dashboards, prune=prune)
            if not dry_run:
                apply_dashboard(plan, api, spec)
            if plan.dashboard_id:
                plan.url = f"{api.host}/project/{project_id}/dashboards/{plan.dashboard_id}"
            plans.append(plan)
        return DashboardSyncReport(api.host, plans, applied=not dry_run, prune=prune, requests=api.requests)
    finally:
        if own:
            api.close()
