"""Calibration planning for a pass/fail judge: which human labels, judged pass or judged fail, shorten the
corrected pass rate's interval most.

Labels chosen by the judge's verdict are a random sample *within* each judged class, so the pass rate is corrected
per judged class: θ = p·a₁ + (1 − p)·a₀, with p the share of the run's items judged pass and aⱼ the share of
human passes among the labelled items judged j (double sampling). Its variance is

    p²·a₁(1 − a₁)/n₁ + (1 − p)²·a₀(1 − a₀)/n₀ + (a₁ − a₀)²·p(1 − p)/N

(n items labelled in each class, N items in the run). More labels go, one at a time, where they shrink it most:
the class with the larger pᵢ²·aᵢ(1 − aᵢ)·(1/nᵢ − 1/(nᵢ + 1)), which ends at the Neyman allocation nⱼ ∝ wⱼ·√(aⱼ(1 − aⱼ)).
Not the sensitivity/specificity split of Lee et al. (arXiv 2511.21140): that one allocates between human-pass
and human-fail items, a class no one knows before the item is rated; the judge's verdict is known beforehand.
A class with no spread yet (all labels agree) is planned with (x + 1)/(n + 2), so it still gets labels.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class JudgedClass:
    """One judged class: its share of the run's items, its labelled items and how many of them humans passed."""

    weight: float
    labelled: int
    human_passes: int

    @property
    def share(self) -> float | None:
        """Share of human passes among its labelled items (None without any)."""
        return self.human_passes / self.labelled if self.labelled else None

    def planning_share(self) -> float:
        """The share used to plan: (x + 1)/(n + 2), never 0 or 1."""
        return (self.human_passes + 1) / (self.labelled + 2)


@dataclass(frozen=True)
class Corrected:
    """The pass rate corrected per judged class, its standard error and interval (None with `reason`)."""

    value: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None = None


@dataclass(frozen=True)
class LabelPlan:
    """How many more labels to ask for in each judged class, and the interval's half-width before and after."""

    judged_pass: int
    judged_fail: int
    half_width_now: float | None
    half_width_after: float
    half_width_random: float
    """After the same number of labels drawn without looking at the verdict (split as the run is)."""


def variance(passed: JudgedClass, failed: JudgedClass, items: int, *, planning: bool = False) -> float | None:
    """The variance of the per-class corrected pass rate (None when a class has no label)."""
    if not passed.labelled or not failed.labelled:
        return None
    a1 = passed.planning_share() if planning else passed.share
    a0 = failed.planning_share() if planning else failed.share
    assert a1 is not None and a0 is not None
    p = passed.weight
    return (
        p**2 * a1 * (1 - a1) / passed.labelled
        + (1 - p) ** 2 * a0 * (1 - a0) / failed.labelled
        + (a1 - a0) ** 2 * p * (1 - p) / items
    )


def corrected(passed: JudgedClass, failed: JudgedClass, items: int, *, confidence: float = 0.95) -> Corrected:
    """The pass rate corrected per judged class, with a normal interval."""
    if not passed.labelled or not failed.labelled:
        missing = "judged pass" if not passed.labelled else "judged fail"
        return Corrected(None, None, None, None, f"no human label on an item {missing}")
    value = passed.weight * (passed.share or 0.0) + (1 - passed.weight) * (failed.share or 0.0)
    var = variance(passed, failed, items)
    assert var is not None
    se = math.sqrt(var)
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    return Corrected(value, se, max(0.0, value - z * se), min(1.0, value + z * se))


def allocate(passed: JudgedClass, failed: JudgedClass, items: int, more: int, *, confidence: float = 0.95) -> LabelPlan:
    """Split `more` labels between the judged classes, one at a time where the planning variance drops most."""
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    n = {1: passed.labelled, 0: failed.labelled}
    add = {1: 0, 0: 0}
    spread = {1: passed.weight**2 * _pq(passed), 0: failed.weight**2 * _pq(failed)}
    for _ in range(more):
        gain = {j: spread[j] * (1 / max(n[j] + add[j], 0.5) - 1 / (n[j] + add[j] + 1)) for j in (0, 1)}
        add[max(gain, key=lambda j: (gain[j], j))] += 1
    now = variance(passed, failed, items, planning=True)
    after = _planned(passed, failed, items, add[1], add[0])
    random_pass = round(more * passed.weight)
    random = _planned(passed, failed, items, random_pass, more - random_pass)
    return LabelPlan(
        add[1], add[0], None if now is None else z * math.sqrt(now), z * math.sqrt(after), z * math.sqrt(random)
    )


def _pq(c: JudgedClass) -> float:
    a = c.planning_share()
    return a * (1 - a)


def _planned(passed: JudgedClass, failed: JudgedClass, items: int, add_pass: int, add_fail: int) -> float:
    """The planning variance once `add_pass` and `add_fail` more labels came in (infinite if a class has none)."""
    n1, n0 = passed.labelled + add_pass, failed.labelled + add_fail
    if not n1 or not n0:
        return math.inf
    a1, a0, p = passed.planning_share(), failed.planning_share(), passed.weight
    return p**2 * a1 * (1 - a1) / n1 + (1 - p) ** 2 * a0 * (1 - a0) / n0 + (a1 - a0) ** 2 * p * (1 - p) / items


def judged_classes(judge: Sequence[float], human: Sequence[float | None]) -> tuple[JudgedClass, JudgedClass]:
    """(judged pass, judged fail) of a run: each item's verdict (0/1) and its human label where there is one."""
    items = len(judge)
    if not items:
        raise ValueError("no item has a judge verdict")
    passes = sum(1 for j in judge if j == 1)
    labelled = [(j, h) for j, h in zip(judge, human, strict=True) if h is not None]
    ones = [h for j, h in labelled if j == 1]
    zeros = [h for j, h in labelled if j == 0]
    return (
        JudgedClass(passes / items, len(ones), int(sum(ones))),
        JudgedClass(1 - passes / items, len(zeros), int(sum(zeros))),
    )
