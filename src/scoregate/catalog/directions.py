"""Which way each score improves: from the evaluator files (`direction:`), with a default per kind.

`higher` or `lower` is better, or `none`: a score that is described (a word count, a compression
ratio) but never called better or worse. Run metrics and the extraction metrics have fixed
directions; a composite takes the direction its weighted parts share (else `none`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from scoregate.catalog.config_models import CompositeSpec
from scoregate.store.vocabulary import RUN_METRIC_DIRECTIONS, Direction


class _Scored(Protocol):
    """What directions need of a loaded project (naming `Project` would tie analysis to project loading)."""

    @property
    def evaluators(self) -> Mapping[str, Any]: ...

    @property
    def config(self) -> Any: ...


EXTRACTION_LOWER = frozenset({"hallucination_rate", "omission_rate", "parse_failure_rate", "schema_failure_rate"})
"""Extraction metrics where smaller is better; every other extraction metric is higher-is-better."""


def _extraction_direction(key: str) -> Direction:
    return "lower" if key.removeprefix("extraction.") in EXTRACTION_LOWER else "higher"


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


def project_directions(project: _Scored) -> dict[str, Direction]:
    """Return metric → direction for every evaluator key, composite and run metric of a project."""
    directions: dict[str, Direction] = dict(RUN_METRIC_DIRECTIONS)
    for spec in project.evaluators.values():
        directions.update(spec.directions())
    for name, composite in project.config.composites.items():
        directions[name] = composite_direction(composite, directions)
    return directions


def default_direction(metric: str) -> Direction:
    """Return the direction of a metric known by name alone (run metrics, extraction metrics); else higher."""
    if metric in RUN_METRIC_DIRECTIONS:
        return RUN_METRIC_DIRECTIONS[metric]
    return _extraction_direction(metric)
