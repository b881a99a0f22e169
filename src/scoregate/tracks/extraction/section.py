"""The extraction track's block in summary.json (`extraction`), as a type: the record reads the block through it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from scoregate.store.record_base import Number, Record


class ExtractionSection(Record):
    """summary.json `extraction` (`run_summary.extraction_report`): counts, micro metrics, levels, recommendation."""

    evaluator: str | None = None
    """The evaluator as `name@version`."""
    items: int | None = None
    scored: int | None = None
    not_scored: dict[str, int] = Field(default_factory=dict)
    """Why items were not scored (a failed model call, a reference problem), with their counts."""
    metrics: dict[str, Number | None] = Field(default_factory=dict)
    """Each run-level metric's value, or None when it could not be measured (`null_reasons` says why)."""
    levels: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each production level (minimum, target, excellence): its verdict and the gates behind it."""
    level_reached: str | None = None
    recommendation: dict[str, Any] | None = None
