"""`kind: shouts`: the share of a reply's words written in capitals; calmer is better, no model call."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction
from scoregate.scoring.base import EvalContext
from scoregate.store.records import DataType, Score


class ShoutsSpec(EvaluatorSpec):
    """An evaluator file of `kind: shouts`: the key its score is written under."""

    kind: Literal["shouts"]
    key: str = Field(default="shouts", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    def score_keys(self) -> list[str]:
        """The one share."""
        return [self.key]

    def directions(self) -> dict[str, Direction]:
        """Fewer capitals is better."""
        return {self.key: "lower"}


class ShoutsEvaluator:
    """Scores the share of words in capitals; null with the reason when there is no word to count."""

    def __init__(self, spec: ShoutsSpec) -> None:
        self.spec, self.name, self.version = spec, spec.name, spec.version

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The one numeric share."""
        return [(self.spec.key, "numeric")]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """The share of the output's words (of two letters or more) written in capitals."""
        words = [w for w in str(ctx.output or "").split() if sum(c.isalpha() for c in w) >= 2]
        if not words:
            return [Score.missing(self.spec.key, "numeric", self.name, "the output has no word")]
        return [Score(self.spec.key, sum(w.isupper() for w in words) / len(words), "numeric", self.name)]


def _build(spec: ShoutsSpec, default_judge_model: str | None) -> Any:
    return ShoutsEvaluator(spec)


KIND = EvaluatorKind("shouts", ShoutsSpec, _build)
