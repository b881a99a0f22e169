"""The stop-early rule: read a confidence sequence after each batch, settle the gate's question or hit a cap.

The sequence is `analysis.sequential`'s (Waudby-Smith & Ramdas 2023); this module turns it into a decision
and the record of it (`StopRule`, `StopDecision`: pure dataclasses, JSON-ready).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from scoregate.analysis.sequential import (
    METHODS,
    Method,
    SequenceBounds,
    SequentialInputError,
    check_alpha,
    check_differences,
    check_looks,
    check_range,
    confidence_sequence,
    crossings,
)

__all__ = [
    "SEQUENTIAL_RULE", "SequentialMonitor", "SimulatedStops", "StopDecision", "StopRule", "decide", "settle_many",
]  # fmt: skip

Question = Literal["better", "non-inferior"]
SequentialVerdict = Literal["better", "worse", "non-inferior", "inferior", "inconclusive"]
StopReason = Literal["settled", "item cap", "cost cap", "all items"]

SEQUENTIAL_RULE = (
    "A stop-early verdict follows an anytime-valid 1 − alpha confidence sequence for the mean paired difference "
    "(candidate − reference), read after every batch: better when its lower bound is above 0, worse when its upper "
    "bound is below 0; for a non-inferiority gate, non-inferior when its lower bound is above −margin, inferior when "
    "its upper bound is below −margin (signs flipped when lower is better). Otherwise the run goes on until an item "
    "cap, a cost cap or the last item, and the verdict is inconclusive. Items not run count as nothing."
)
"""The stop rule in words, recorded with every decision."""


@dataclass(frozen=True)
class StopRule:
    """What a stop-early run asks and when it gives up; recorded with the verdict."""

    lo: float
    hi: float
    """Declared range of one difference (see `difference_range`)."""
    question: Question = "better"
    """"better": settles as better or worse; "non-inferior": settles as non-inferior or inferior within `margin`."""
    margin: float = 0.0
    """Largest tolerated loss, in score units (a non-inferiority question only)."""
    direction: Literal["higher", "lower"] = "higher"
    alpha: float = 0.05
    method: Method = "betting"
    max_items: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        check_alpha(self.alpha)
        check_range(self.lo, self.hi)
        if self.question not in ("better", "non-inferior"):
            raise SequentialInputError(f"unknown question {self.question!r}", where="question")
        if self.direction not in ("higher", "lower"):
            raise SequentialInputError("a stop-early metric needs direction higher or lower", where="direction")
        if self.method not in METHODS:
            raise SequentialInputError(f"unknown method {self.method!r}", where="method")
        if not math.isfinite(self.margin) or self.margin < 0:
            raise SequentialInputError(f"margin must be 0 or more, got {self.margin!r}", where="margin")
        if self.question == "better" and self.margin != 0:
            raise SequentialInputError("a margin applies to a non-inferiority question only", where="margin")
        if self.max_items is not None and self.max_items < 1:
            raise SequentialInputError(f"item cap must be at least 1, got {self.max_items!r}", where="max_items")
        if self.max_cost is not None and not self.max_cost > 0:
            raise SequentialInputError(f"cost cap must be above 0, got {self.max_cost!r}", where="max_cost")

    @property
    def threshold(self) -> float:
        """The difference the sequence must exclude: 0, or −margin (+margin when lower is better)."""
        return self.margin if self.direction == "lower" else -self.margin

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form with the method's citation and the rule in words."""
        return {**asdict(self), "method_reference": METHODS[self.method], "rule": SEQUENTIAL_RULE}


@dataclass(frozen=True)
class StopDecision:
    """The stop rule read after a look: settled or not, the verdict, and whether (and why) to stop."""

    settled: bool
    verdict: SequentialVerdict
    stop: bool
    stop_reason: StopReason | None
    n: int
    total: int
    lower: float
    upper: float
    mean: float
    cost: float | None
    rule: StopRule = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready) with "stopped at n of N" in words."""
        out = asdict(self)
        out["rule"] = self.rule.to_dict()
        out["progress"] = f"{'stopped' if self.stop else 'ran'} at {self.n} of {self.total}"
        return out


_WORDS: dict[tuple[Question, bool], SequentialVerdict] = {
    ("better", True): "better", ("better", False): "worse",
    ("non-inferior", True): "non-inferior", ("non-inferior", False): "inferior",
}  # fmt: skip


def decide(bounds: SequenceBounds, rule: StopRule, *, total: int, cost: float | None = None) -> StopDecision:
    """Return the decision read from the sequence's last look, for a run of `total` items."""
    if (bounds.lo, bounds.hi, bounds.alpha, bounds.method) != (rule.lo, rule.hi, rule.alpha, rule.method):
        raise SequentialInputError("the sequence was computed with another range, alpha or method than the rule")
    if bounds.n > total:
        raise SequentialInputError(f"{bounds.n} differences for a run of {total} items", where="total")
    lower, upper, a = bounds.lower[-1], bounds.upper[-1], rule.threshold
    good = lower > a if rule.direction == "higher" else upper < a
    bad = upper < a if rule.direction == "higher" else lower > a
    settled = good or bad
    verdict: SequentialVerdict = _WORDS[(rule.question, good)] if settled else "inconclusive"
    reason: StopReason | None = None
    if settled:
        reason = "settled"
    elif bounds.n >= total:
        reason = "all items"
    elif rule.max_items is not None and bounds.n >= rule.max_items:
        reason = "item cap"
    elif rule.max_cost is not None and cost is not None and cost >= rule.max_cost:
        reason = "cost cap"
    return StopDecision(
        settled, verdict, reason is not None, reason, bounds.n, total, lower, upper, bounds.mean, cost, rule
    )


class SequentialMonitor:
    """Feed a stop-early run's differences batch by batch, in run order; each batch is one look.

    The figures equal `confidence_sequence` over the concatenated batches with the batch ends as looks.
    """

    def __init__(self, rule: StopRule, total: int) -> None:
        if total < 1:
            raise SequentialInputError(f"a run needs at least one item, got {total}", where="total")
        self.rule, self.total = rule, total
        self._values: list[np.ndarray] = []
        self._looks: list[int] = []
        self._lower: list[float] = []
        self._upper: list[float] = []

    @property
    def n(self) -> int:
        """Differences seen so far."""
        return self._looks[-1] if self._looks else 0

    def add(
        self,
        differences: Sequence[float] | np.ndarray,
        *,
        cost: float | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> StopDecision:
        """Add one batch of differences (cost: the run's spend so far) and return the decision at this look."""
        rule = self.rule
        batch = check_differences(differences, rule.lo, rule.hi, offset=self.n, item_ids=item_ids)
        if self.n + batch.size > self.total:
            raise SequentialInputError(f"{self.n + batch.size} differences for a run of {self.total} items")
        self._values.append(batch)
        d = np.concatenate(self._values)
        now = confidence_sequence(d, lo=rule.lo, hi=rule.hi, alpha=rule.alpha, method=rule.method, looks=[d.size])
        self._looks.append(d.size)
        self._lower.append(max([now.lower[-1], *self._lower[-1:]]))
        self._upper.append(min([now.upper[-1], *self._upper[-1:]]))
        return decide(self.bounds(), rule, total=self.total, cost=cost)

    def bounds(self) -> SequenceBounds:
        """Return the sequence at every look so far."""
        if not self._looks:
            raise SequentialInputError("no differences yet: add a batch first")
        mean = float(np.concatenate(self._values).mean())
        r = self.rule
        return SequenceBounds(
            r.method, r.alpha, r.lo, r.hi, tuple(self._looks), tuple(self._lower), tuple(self._upper), mean
        )


@dataclass(frozen=True)
class SimulatedStops:
    """Where each of many simulated runs stopped (items run) and its verdict."""

    n: np.ndarray
    verdict: np.ndarray


def settle_many(differences: np.ndarray, rule: StopRule, *, looks: Sequence[int] | None = None) -> SimulatedStops:
    """Return where each row of `differences` (runs × items, run order) stops under `rule`, vectorised.

    For simulations and planning: a run stops at its first look whose running sequence settles the question,
    else at its item cap or its last item (the cost cap does not apply: there are no costs here). The same
    decisions as `SequentialMonitor` fed the same batches (see `crossings` for the betting method's tolerance).
    """
    d = np.asarray(differences, dtype=float)
    above, below = crossings(
        d, rule.threshold, lo=rule.lo, hi=rule.hi, alpha=rule.alpha, method=rule.method, looks=looks
    )
    at = check_looks(looks, d.shape[1])
    good, bad = (above, below) if rule.direction == "higher" else (below, above)
    settled = good | bad
    if rule.max_items is not None:
        settled &= at[None, :] <= rule.max_items
    rows = np.arange(d.shape[0])
    first = np.argmax(settled, axis=1)
    hit = settled[rows, first]
    n = np.where(hit, at[first], min(d.shape[1], rule.max_items or d.shape[1]))
    words = np.array(["inconclusive", _WORDS[(rule.question, True)], _WORDS[(rule.question, False)]])
    return SimulatedStops(n=n, verdict=words[np.where(~hit, 0, np.where(good[rows, first], 1, 2))])
