"""Which way each score improves: from the evaluator files (`direction:`), with a default per kind.

`higher` or `lower` is better, or `none`: a score that is described (a word count, a compression
ratio) but never called better or worse. Run metrics and the extraction metrics have fixed
directions; a composite takes the direction its weighted parts share (else `none`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from scoregate.catalog.models import (
    CompositeSpec,
    CountersSpec,
    CustomSpec,
    Direction,
    EvaluatorSpec,
    ExtractionSpec,
    FactRecallSpec,
    TagsSpec,
)

if TYPE_CHECKING:
    from scoregate.catalog.project import Project

COUNTER_DIRECTIONS: dict[str, Direction] = {
    "word_count": "none",
    "compression_ratio": "none",
    "references_count": "higher",
    "tools_count": "higher",
    "tldr_within_cap": "higher",
    "required_sections": "higher",
    "missing_sections": "none",
    "similarity": "higher",
}
"""Counter → its default direction (a counter's `direction:` overrides it)."""

RUN_METRIC_DIRECTIONS: dict[str, Direction] = {
    "success_rate": "higher",
    "error_count": "lower",
    "latency_p50_ms": "lower",
    "latency_p95_ms": "lower",
    "latency_p99_ms": "lower",
    "latency_mean_ms": "lower",
    "tokens_in_total": "none",
    "tokens_out_total": "none",
    "cost_usd_total": "lower",
    "cost_usd_per_item": "lower",
    "retries_total": "lower",
    "items": "none",
}
"""Run-level metrics (summary.json `run_metrics`) → direction."""

EXTRACTION_LOWER = frozenset({"hallucination_rate", "omission_rate", "parse_failure_rate", "schema_failure_rate"})
"""Extraction metrics where smaller is better; every other extraction metric is higher-is-better."""


def _extraction_direction(key: str) -> Direction:
    return "lower" if key.removeprefix("extraction.") in EXTRACTION_LOWER else "higher"


def evaluator_directions(spec: EvaluatorSpec) -> dict[str, Direction]:
    """Return score key → direction for every numeric or boolean score an evaluator file declares."""
    if isinstance(spec, CountersSpec):
        return {c.score_key: c.direction or COUNTER_DIRECTIONS.get(c.counter, "higher") for c in spec.counters}
    if isinstance(spec, ExtractionSpec):
        from scoregate.tracks.extraction.keys import METRIC_KEYS

        return {key: _extraction_direction(key) for key in METRIC_KEYS}
    if isinstance(spec, TagsSpec):
        from scoregate.tracks.tags.metrics import METRIC_KEYS as TAG_KEYS

        tags: dict[str, Direction] = {key: "higher" for key in TAG_KEYS}
        tags.update({f"{key}_micro": "higher" for key in TAG_KEYS})
        tags["labels_outside_vocabulary"] = "lower"
        return tags
    if isinstance(spec, FactRecallSpec):
        return {spec.key: "higher"}
    if isinstance(spec, CustomSpec):
        return {spec.score_key: spec.direction}
    out: dict[str, Direction] = {}
    for field in (spec.score, *spec.extra):
        default: Direction = "higher" if field.data_type in ("numeric", "boolean") else "none"
        out[field.key] = field.direction or default
    return out


def composite_direction(spec: CompositeSpec, directions: Mapping[str, Direction]) -> Direction:
    """Return the direction the weighted parts of a composite share (a negative weight flips it), else none."""
    parts: set[Direction] = set()
    for key, weight in spec.weights.items():
        part = directions.get(key, "higher")
        if part == "none":
            return "none"
        if weight != 0:
            parts.add(part if weight > 0 else ("lower" if part == "higher" else "higher"))
    return parts.pop() if len(parts) == 1 else "none"


def project_directions(project: Project) -> dict[str, Direction]:
    """Return metric → direction for every evaluator key, composite and run metric of a project."""
    directions: dict[str, Direction] = dict(RUN_METRIC_DIRECTIONS)
    for spec in project.evaluators.values():
        directions.update(evaluator_directions(spec))
    for name, composite in project.config.composites.items():
        directions[name] = composite_direction(composite, directions)
    return directions


def default_direction(metric: str) -> Direction:
    """Return the direction of a metric known by name alone (run metrics, extraction metrics); else higher."""
    if metric in RUN_METRIC_DIRECTIONS:
        return RUN_METRIC_DIRECTIONS[metric]
    return _extraction_direction(metric)


def direction_arrow(direction: str) -> str:
    """Return ↑ (higher is better), ↓ (lower is better) or · (no direction)."""
    return {"higher": "↑", "lower": "↓"}.get(direction, "·")
