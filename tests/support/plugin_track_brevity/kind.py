"""`kind: brevity`: the words of each reply (per item), and the run-level words per item a gate may name."""

from __future__ import annotations

from typing import Any, Literal

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction
from scoregate.scoring.base import EvalContext
from scoregate.store.records import DataType, Score

KEY = "reply_words"
RUN_KEY = "words_per_reply_run"


class BrevitySpec(EvaluatorSpec):
    """`kind: brevity`: no options beyond the name and version."""

    kind: Literal["brevity"]

    def score_keys(self) -> list[str]:
        """The per-item count, then the run-level value the track adds for gates."""
        return [KEY, RUN_KEY]

    def directions(self) -> dict[str, Direction]:
        """Shorter replies are better."""
        return {KEY: "lower", RUN_KEY: "lower", "words_per_reply": "lower"}


class BrevityEvaluator:
    """Counts the words of a text reply."""

    def __init__(self, spec: BrevitySpec) -> None:
        self.spec, self.name, self.version = spec, spec.name, spec.version

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The one numeric count."""
        return [(KEY, "numeric")]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Count the words of the output."""
        if not isinstance(ctx.output, str):
            return [Score.missing(KEY, "numeric", self.name, "the output is not text")]
        return [Score(KEY, float(len(ctx.output.split())), "numeric", self.name)]


def _build(spec: BrevitySpec, default_judge_model: str | None) -> Any:
    return BrevityEvaluator(spec)


KIND = EvaluatorKind("brevity", BrevitySpec, _build)
