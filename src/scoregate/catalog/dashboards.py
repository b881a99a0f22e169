"""`dashboards/<name>.yaml`: a Langfuse dashboard and its widgets, kept in git and synced by `dashboards sync`.

The widget fields follow Langfuse's public dashboard API (`/api/public/unstable/dashboard-widgets`): a view
(`observations` or `scores-numeric` / `scores-boolean` / `scores-categorical` — the server has no traces
view; trace metadata is filtered on observations), metrics with aggregations, dimensions, filters in
Langfuse's filter-state shape, a chart type and a placement on the 12-column grid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter, model_validator

from scoregate.catalog.models import Strict
from scoregate.catalog.yaml_files import load_model
from scoregate.errors import ValidationFailed

DASHBOARDS_DIR = "dashboards"
View = Literal["observations", "scores-numeric", "scores-boolean", "scores-categorical"]
ChartType = Literal[
    "LINE_TIME_SERIES", "AREA_TIME_SERIES", "BAR_TIME_SERIES", "HORIZONTAL_BAR", "VERTICAL_BAR",
    "PIE", "NUMBER", "HISTOGRAM", "PIVOT_TABLE",
]  # fmt: skip
Aggregation = Literal["sum", "avg", "count", "max", "min", "p50", "p75", "p90", "p95", "p99", "histogram", "uniq"]
FilterType = Literal[
    "string", "number", "datetime", "boolean", "null", "stringOptions", "arrayOptions", "categoryOptions",
    "stringObject", "numberObject", "booleanObject",
]  # fmt: skip


class Metric(Strict):
    """What a widget measures: a measure (`value`, `count`, `latency`, ...) and its aggregation."""

    measure: str = Field(min_length=1, description="e.g. `value` (scores), `count`, `latency`, `totalCost`.")
    agg: Aggregation = "avg"


class WidgetFilter(Strict):
    """One filter in Langfuse's filter-state shape, e.g. score `name` = WeightedQuality, or trace metadata."""

    column: str = Field(min_length=1, description="e.g. `name` (score name), `metadata` (with `key`), `tags`.")
    operator: str = Field(min_length=1, description="`=`, `contains`, `any of`, `>=`, ... (by type).")
    type: FilterType = "string"
    value: Any = None
    key: str | None = Field(default=None, description="The metadata key (stringObject) or score name.")


class Placement(Strict):
    """Where the widget sits on the dashboard's 12-column grid."""

    x: int = Field(default=0, ge=0, le=11)
    y: int = Field(default=0, ge=0)
    width: int = Field(default=6, ge=1, le=12)
    height: int = Field(default=6, ge=1)


class WidgetSpec(Strict):
    """One chart of the dashboard; its `name` is its identity in Langfuse (unique in the project)."""

    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    view: View
    metrics: list[Metric] = Field(min_length=1)
    dimensions: list[str] = Field(default_factory=list, description="Fields to group by, e.g. `name`, `environment`.")
    filters: list[WidgetFilter] = Field(default_factory=list)
    chart: ChartType = Field(description="Chart type, e.g. LINE_TIME_SERIES or VERTICAL_BAR.")
    chart_config: dict[str, Any] | None = Field(default=None, description="Extra chart settings (Langfuse's shape).")
    placement: Placement = Field(default_factory=Placement)


class DashboardSpec(Strict):
    """A Langfuse dashboard: its widgets and their placement; the `name` is its identity in Langfuse."""

    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    filters: list[WidgetFilter] = Field(default_factory=list, description="Filters applied to every widget.")
    widgets: list[WidgetSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_widget_names(self) -> DashboardSpec:
        names = [w.name for w in self.widgets]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"widget names must be unique (they identify widgets in Langfuse): {', '.join(twice)}")
        return self


_DASHBOARD: TypeAdapter[DashboardSpec] = TypeAdapter(DashboardSpec)


def load_dashboards(root: Path) -> dict[str, tuple[Path, DashboardSpec]]:
    """Read every `dashboards/*.yaml`; raise ValidationFailed listing every problem (file, field)."""
    found: dict[str, tuple[Path, DashboardSpec]] = {}
    problems: list[str] = []
    for path in sorted((root / DASHBOARDS_DIR).glob("*.yaml")):
        loaded = load_model(path, _DASHBOARD)
        problems += loaded[1]
        if loaded[0] is not None:
            found[path.stem] = (path, loaded[0])
    names = [spec.name for _, spec in found.values()]
    problems += [f"dashboard name {n!r} is used by two files" for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise ValidationFailed(problems, hint="fix the dashboard files (schema: schemas/dashboard.schema.json)")
    return found
