"""`kind: tags`: the evaluator file of the semantic tags track, its score keys and directions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction

GOLD_PATH = r"^(expected_output|(input|metadata)(\.[A-Za-z_][A-Za-z0-9_]*)+)$"


class TagsSpec(EvaluatorSpec):
    """`kind: tags`: topics, risks and actions of the output scored against gold labels; no model call."""

    kind: Literal["tags"]
    gold_source: str = Field(
        default="expected_output", pattern=GOLD_PATH, description="Path of each item's gold topics, risks, actions."
    )
    action_threshold: float = Field(
        default=0.8, gt=0, le=1, description="Normalised Levenshtein similarity at which two actions match."
    )

    def score_keys(self) -> list[str]:
        """The evaluator's per-item keys, then the run-level micro values a gate may name."""
        from scoregate.tracks.tags.kind import TagsEvaluator
        from scoregate.tracks.tags.run_summary import GATE_METRIC_KEYS

        return [k for k, _ in TagsEvaluator(self).score_keys()] + list(GATE_METRIC_KEYS)

    def directions(self) -> dict[str, Direction]:
        """Every per-item and micro metric is higher-is-better; labels outside the vocabulary, lower."""
        from scoregate.tracks.tags.metrics import METRIC_KEYS

        tags: dict[str, Direction] = {key: "higher" for key in METRIC_KEYS}
        tags.update({f"{key}_micro": "higher" for key in METRIC_KEYS})
        tags["labels_outside_vocabulary"] = "lower"
        return tags


def _build(spec: TagsSpec, default_judge_model: str | None) -> Any:
    from scoregate.tracks.tags.kind import TagsEvaluator

    return TagsEvaluator(spec)


KIND = EvaluatorKind("tags", TagsSpec, _build)
