"""The fake runs a `code` evaluator's Python source as Langfuse's runtime does (evaluation-methods/code-evaluators):
`evaluate(ctx)` with `ctx.observation` (`input`, `output`, `metadata`) and `ctx.experiment` (None on live traffic),
`Score` and `EvaluationResult` given to the source; each returned score is written under its own name. An error
(or no score) is a failed execution: no score is written, as on the server, and the fake keeps the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any


@dataclass
class Score:
    """A score the evaluator returns (Langfuse's runtime type)."""

    name: str
    value: Any
    data_type: str
    comment: str | None = None
    config_id: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class EvaluationResult:
    """What `evaluate` returns."""

    scores: list[Score]


def run_code(source: str, observation: dict[str, Any]) -> list[Score] | str:
    """The scores `evaluate` returns for one observation, or the execution's error message."""
    namespace: dict[str, Any] = {"Score": Score, "EvaluationResult": EvaluationResult, "__name__": "evaluator"}
    ctx = SimpleNamespace(observation=SimpleNamespace(**observation), experiment=None)
    try:
        exec(compile(source, "<code evaluator>", "exec"), namespace)  # the fake's stand-in for Langfuse's sandbox
        result = namespace["evaluate"](ctx)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if not result.scores:
        return "evaluate returned no score"
    return list(result.scores)
