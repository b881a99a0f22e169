"""`kind: counters`: deterministic scores computed from the output, no model call (the code: `scoring.counters`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction, Strict

CounterName = Literal[
    "word_count",
    "compression_ratio",
    "references_count",
    "tools_count",
    "tldr_within_cap",
    "required_sections",
    "missing_sections",
    "similarity",
]


class CounterSpec(Strict):
    """One deterministic counter and its options."""

    counter: CounterName
    key: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Score key; default: the counter's name."
    )
    source: str | None = Field(default=None, description="Path of the reference text (compression, similarity).")
    cap: str | Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="TL;DR word cap: a number (at least 1) or `input.<field>`."
    )
    sections: dict[str, list[str]] | None = Field(
        default=None, description="Required section titles per style (for required_sections)."
    )
    style: str | None = Field(default=None, description="Path of the style field (for required_sections).")
    direction: Direction | None = Field(
        default=None,
        description="`higher` or `lower` is better, or `none`; default by counter: none for word_count, "
        "compression_ratio and missing_sections (text), higher for the others.",
    )

    @property
    def score_key(self) -> str:
        """The key this counter's score is written under."""
        return self.key or self.counter


class CountersSpec(EvaluatorSpec):
    """`kind: counters`: deterministic scores computed from the output, no model call."""

    kind: Literal["counters"]
    counters: list[CounterSpec] = Field(min_length=1)

    def score_keys(self) -> list[str]:
        """One key per counter, in order."""
        return [c.score_key for c in self.counters]

    def directions(self) -> dict[str, Direction]:
        """A counter's `direction:`, else its default (`COUNTER_DIRECTIONS`)."""
        return {c.score_key: c.direction or COUNTER_DIRECTIONS.get(c.counter, "higher") for c in self.counters}


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


def _build(spec: CountersSpec, default_judge_model: str | None) -> Any:
    from scoregate.scoring.counters import CountersEvaluator

    return CountersEvaluator(spec)


KIND = EvaluatorKind("counters", CountersSpec, _build)
