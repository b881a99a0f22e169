"""A throwaway evaluator kind, the whole of it in one module: `kind: exclaims` counts the `!` of a reply.

tests/scoring/test_kind_plugin.py adds it to the kind registry (the one line a real kind adds to
`scoring/kinds/registry.py`) and runs a project that uses it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction
from scoregate.scoring.base import EvalContext
from scoregate.store.records import DataType, Score


class ExclaimsSpec(EvaluatorSpec):
    """`kind: exclaims`: the number of exclamation marks in the output; fewer is better."""

    kind: Literal["exclaims"]
    key: str = Field(default="exclaims", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    def score_keys(self) -> list[str]:
        """The one count."""
        return [self.key]

    def directions(self) -> dict[str, Direction]:
        """A calmer reply is better."""
        return {self.key: "lower"}


class ExclaimsEvaluator:
    """Counts `!` in the reply; null with the reason when there is no text to count in."""

    def __init__(self, spec: ExclaimsSpec) -> None:
        self.spec, self.name, self.version = spec, spec.name, spec.version

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The one numeric count."""
        return [(self.spec.key, "numeric")]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Count the exclamation marks of the output."""
        if not isinstance(ctx.output, str):
            return [Score.missing(self.spec.key, "numeric", self.name, "the output is not text")]
        return [Score(self.spec.key, float(ctx.output.count("!")), "numeric", self.name)]


def _build(spec: ExclaimsSpec, default_judge_model: str | None) -> Any:
    return ExclaimsEvaluator(spec)


KIND = EvaluatorKind("exclaims", ExclaimsSpec, _build)
