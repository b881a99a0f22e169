"""`kind: custom`: an async Python function scores the output (the code: `scoring.custom`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from scoregate.catalog.evaluators import TEXT_PATH, EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction
from scoregate.errors import ScoregateError


class CustomSpec(EvaluatorSpec):
    """`kind: custom`: an async Python function `(expected, got) -> (score, detail)`, named `package.module:name`."""

    kind: Literal["custom"]
    function: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$",
        description="`package.module:name` of an importable async function (expected, got) -> (score, detail).",
    )
    key: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Score key; default: name.")
    expected_source: str = Field(default="expected_output", pattern=TEXT_PATH, description="Path of the expected text.")
    got_source: str = Field(default="output", pattern=TEXT_PATH, description="Path of the produced text.")
    range: tuple[float, float] | None = Field(default=None, description="Inclusive [min, max] the score must fall in.")
    direction: Direction = Field(default="higher", description="higher or lower is better, or none (described only).")

    @property
    def score_key(self) -> str:
        """The key the score is written under."""
        return self.key or self.name

    def score_keys(self) -> list[str]:
        """The one key the function's score is written under."""
        return [self.score_key]

    def directions(self) -> dict[str, Direction]:
        """The file's `direction:`."""
        return {self.score_key: self.direction}

    def score_ranges(self) -> dict[str, tuple[float, float]]:
        """The file's `range:`, when it gives one."""
        return {self.score_key: self.range} if self.range is not None else {}

    def problems(self, where: str) -> list[str]:
        """The function must import and be an async function."""
        from scoregate.scoring.custom import load_function

        try:
            load_function(self.function, where=f"{where}: function")
        except ScoregateError as exc:
            return [exc.render()]
        return []


def _build(spec: CustomSpec, default_judge_model: str | None) -> Any:
    from scoregate.scoring.custom import CustomEvaluator

    return CustomEvaluator(spec)


KIND = EvaluatorKind("custom", CustomSpec, _build)
