"""`kind: custom`: any async Python function `(expected, got) -> (score, detail)`, named `package.module:name`.

The function may return a `(score, detail)` tuple or an object with `score` and `detail` attributes (such as
`CustomMetricResult`). No expected text, an exception, or a score that is not a finite number (or is outside
`range:`): null with the reason. The detail is kept as the score's comment.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.scoring.base import EvalContext, resolve_path
from scoregate.scoring.facts import text_of
from scoregate.scoring.kinds.custom import CustomSpec
from scoregate.store.records import DataType, Score

CustomMetric = Callable[[str, str], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class CustomMetricResult:
    """What a custom metric may return: a score and a human-readable detail."""

    score: float
    detail: str


def load_function(reference: str, *, where: str) -> CustomMetric:
    """Import `package.module:name` and check it is an async function; raise a clear error otherwise."""
    module_name, _, attr = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ScoregateError(
            f"cannot import {module_name!r} for `function: {reference}`: {exc}",
            where=where,
            hint="install the package or put its folder on PYTHONPATH",
        ) from None
    function = getattr(module, attr, None)
    if function is None:
        raise ScoregateError(f"module {module_name!r} has no {attr!r}", where=where, hint="check `function:`")
    if not inspect.iscoroutinefunction(function):
        raise ScoregateError(
            f"{reference} is not an async function",
            where=where,
            hint="define it as `async def name(expected: str, got: str) -> tuple[float, str]`",
        )
    return function


def _unpack(returned: Any) -> tuple[Any, Any]:
    if isinstance(returned, tuple) and len(returned) == 2:
        return returned
    if hasattr(returned, "score") and hasattr(returned, "detail"):
        return returned.score, returned.detail
    raise TypeError(f"returned {type(returned).__name__}, not (score, detail)")


class CustomEvaluator:
    """Scores with a user's async function of (expected text, produced text)."""

    def __init__(self, spec: CustomSpec) -> None:
        self.name = spec.name
        self.version = spec.version
        self.spec = spec
        self.function = load_function(spec.function, where=f"evaluator {spec.name}")

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The one numeric score."""
        return [(self.spec.score_key, "numeric")]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Call the function; its score with the detail as comment, or null with the reason."""
        key = self.spec.score_key

        def missing(reason: str) -> list[Score]:
            return [Score.missing(key, "numeric", self.name, reason)]

        expected = text_of(resolve_path(self.spec.expected_source, ctx))
        if expected is None:
            return missing(f"no expected text ({self.spec.expected_source} is empty)")
        got = text_of(resolve_path(self.spec.got_source, ctx)) or ""
        try:
            value, detail = _unpack(await self.function(expected, got))
        except Exception as exc:  # a user's metric failing is a null with the reason, never a lost run
            return missing(f"{self.spec.function} failed: {type(exc).__name__}: {exc}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return missing(f"{self.spec.function} returned score {value!r}, not a finite number")
        low, high = self.spec.range or (-math.inf, math.inf)
        if not low <= value <= high:
            return missing(f"{self.spec.function} returned {value}, outside {low:g}-{high:g}")
        return [Score(key, float(value), "numeric", self.name, comment=None if detail is None else str(detail))]
