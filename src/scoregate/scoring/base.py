"""The evaluator contract: what an evaluator receives, and the registry from evaluator kind to code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from scoregate.calls.errors import ModelCallFailed as ModelCallFailed  # evaluators catch it
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.store.records import DataType, Score

ModelCall = Callable[[str | None, CompletionRequest, str], Awaitable[Completion]]
"""call(model_name or None for the judge default, request, purpose) → Completion; raises ModelCallFailed."""


@dataclass(frozen=True, slots=True)
class EvalContext:
    """What an evaluator sees of one item."""

    item_id: str
    input: dict[str, Any]
    output: Any
    expected_output: Any
    metadata: dict[str, Any]
    call_model: ModelCall
    instructions: tuple[str, ...] = ()
    """The prompt's own lines for this item (`catalog.templates.instruction_lines`); () when no prompt was sent."""


class Evaluator(Protocol):
    """Turns one item's output into named scores; never raises for a bad output (null + reason instead)."""

    name: str
    version: int

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The (key, data type) pairs this evaluator writes, in order."""
        ...

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return one Score per key, null with a reason where not measurable."""
        ...


def resolve_path(path: str, ctx: EvalContext) -> Any:
    """Return the value at `output`, `expected_output`, `input.<f>`, `metadata.<f>` (None when absent)."""
    head, _, rest = path.partition(".")
    roots: dict[str, Any] = {
        "output": ctx.output,
        "expected_output": ctx.expected_output,
        "input": ctx.input,
        "metadata": ctx.metadata,
    }
    if head not in roots:
        raise KeyError(f"unknown source {path!r}: use output, expected_output, input.<field> or metadata.<field>")
    value = roots[head]
    for part in rest.split(".") if rest else []:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


VALID_ROOTS = ("output", "expected_output", "input", "metadata")
