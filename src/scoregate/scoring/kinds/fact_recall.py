"""`kind: fact_recall`: one judge call lists the facts of both texts (the code: `scoring.facts`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import TEXT_PATH, EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction


class FactRecallSpec(EvaluatorSpec):
    """`kind: fact_recall`: one judge call lists the facts of both texts; score = both / (both + expected) × 100."""

    kind: Literal["fact_recall"]
    key: str = Field(default="fact_recall", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Score key (0-100).")
    expected_source: str = Field(default="expected_output", pattern=TEXT_PATH, description="Path of the expected text.")
    got_source: str = Field(default="output", pattern=TEXT_PATH, description="Path of the produced text.")
    model: str | None = Field(default=None, description="Model name from scoregate.yaml; default: judge_model.")
    temperature: float = Field(default=0.0, ge=0, le=1)
    max_tokens: int = Field(default=700, gt=0)

    def score_keys(self) -> list[str]:
        """The score, then the facts text."""
        return [self.key, self.key + "_facts"]

    def directions(self) -> dict[str, Direction]:
        """More recalled facts are better."""
        return {self.key: "higher"}

    def named_models(self) -> list[str]:
        """The judge model the file names, if any."""
        return [self.model] if self.model else []

    def models_called(self, default_judge: str) -> list[str]:
        """The file's judge model, else the run's."""
        return [self.model or default_judge]


def _build(spec: FactRecallSpec, default_judge_model: str | None) -> Any:
    from scoregate.scoring.facts import FactRecallEvaluator

    return FactRecallEvaluator(spec, default_judge_model)


KIND = EvaluatorKind("fact_recall", FactRecallSpec, _build)
