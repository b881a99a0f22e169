"""The semantic tags track's block in summary.json (`tags`), as a type: the record reads the block through it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from scoregate.store.record_base import Number, Record


class TagsSection(Record):
    """summary.json `tags` (`run_summary.aggregate_tags`): counts, micro P/R/F1 per tag kind, coverage."""

    evaluator: str | None = None
    """The evaluator as `name@version`."""
    items: int | None = None
    scored: int | None = None
    not_scored: dict[str, int] = Field(default_factory=dict)
    """Why items were not scored (a failed model call, no gold labels), with their counts."""
    action_threshold: Number | None = None
    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each micro metric as `measured(...)`: value or null with a reason, coverage, CI."""
    coverage: dict[str, Number | None] = Field(default_factory=dict)
    outside_vocabulary: dict[str, int] = Field(default_factory=dict)
