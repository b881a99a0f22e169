"""Flaky items: items whose verdict on an `every_item` gate flips between observations made under the same conditions.

An observation is one stored record of an item (one run, one repeat) with its value of the gate's metric;
its verdict is that value read against the gate's rule *as the gate stands now*. Observations are taken
oldest first (by run start, then repeat). A flip is a verdict that differs from the previous observation
of the same item under the same conditions (same prompt versions, model, judge, evaluators and item
content): a change of prompt that fixes or breaks an item is not a flip. An unmeasured value is no
observation. The flip rate is flips / comparisons (consecutive pairs under the same conditions); an item
is flaky on a gate when it has at least `min_observations` observations and its flip rate is above
`threshold`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

ItemVerdict = Literal["pass", "fail"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}  # fmt: skip


@dataclass(frozen=True)
class Observation:
    """One measured value of an item's metric: in which run and repeat, and under which conditions."""

    run_id: str
    repeat: int
    conditions: str
    value: float


@dataclass(frozen=True)
class GateRule:
    """The `every_item` gate an item is judged by."""

    name: str
    metric: str
    op: str
    threshold: float


@dataclass(frozen=True)
class FlakyItem:
    """An item whose verdict on a gate flips: its figures and its history, oldest first."""

    item_id: str
    gate: str
    metric: str
    flip_rate: float
    flips: int
    comparisons: int
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def item_verdict(value: float, rule: GateRule) -> ItemVerdict:
    """Return `pass` when the value meets the gate's rule, else `fail`."""
    return "pass" if _OPS[rule.op](value, rule.threshold) else "fail"


def flips(observations: Sequence[Observation], rule: GateRule) -> tuple[int, int]:
    """Return (flips, comparisons) over observations oldest first, pairing only those under the same conditions."""
    last: dict[str, ItemVerdict] = {}
    flipped = compared = 0
    for o in observations:
        verdict = item_verdict(o.value, rule)
        before = last.get(o.conditions)
        if before is not None:
            compared += 1
            flipped += verdict != before
        last[o.conditions] = verdict
    return flipped, compared


class FlipCounter:
    """Counts flips as observations stream past (oldest first), holding a few numbers per item, gate and conditions."""

    def __init__(self) -> None:
        self._state: dict[tuple[str, str, str], list[Any]] = {}

    def add(self, rule: GateRule, item_id: str, observation: Observation) -> None:
        """Count one observation of `item_id` on `rule`."""
        verdict = item_verdict(observation.value, rule)
        state = self._state.get((rule.name, item_id, observation.conditions))
        if state is None:
            self._state[(rule.name, item_id, observation.conditions)] = [verdict, 1, 0, 0]
            return
        state[2] += state[0] != verdict
        state[3] += 1
        state[0] = verdict
        state[1] += 1

    def flaky(self, *, threshold: float, min_observations: int) -> set[tuple[str, str]]:
        """The (gate, item id) pairs whose counts make them flaky (the rule of `flaky_items`)."""
        totals: dict[tuple[str, str], list[int]] = {}
        for (gate, item_id, _), (_, seen, flipped, compared) in self._state.items():
            total = totals.setdefault((gate, item_id), [0, 0, 0])
            total[0] += seen
            total[1] += flipped
            total[2] += compared
        return {
            key for key, (seen, flipped, compared) in totals.items()
            if seen >= min_observations and compared and flipped / compared > threshold
        }  # fmt: skip


def flaky_items(
    histories: Iterable[tuple[GateRule, str, Sequence[Observation]]],
    *,
    threshold: float,
    min_observations: int,
) -> list[FlakyItem]:
    """Return the flaky items among (gate, item id, observations oldest first), in the order given."""
    found = []
    for rule, item_id, observations in histories:
        if len(observations) < min_observations:
            continue
        flipped, compared = flips(observations, rule)
        if compared == 0 or flipped / compared <= threshold:
            continue
        history = [
            {"run_id": o.run_id, "repeat": o.repeat, "value": o.value, "verdict": item_verdict(o.value, rule),
             "conditions": o.conditions}
            for o in observations
        ]  # fmt: skip
        found.append(FlakyItem(item_id, rule.name, rule.metric, flipped / compared, flipped, compared, history))
    return found
