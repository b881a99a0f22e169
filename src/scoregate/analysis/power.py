"""Power-aware planning: how many items × repeats a difference needs, and the smallest one a dataset can detect.

A metric's mean over n items × r repeats (or the mean of its paired differences with a reference) varies as

    Var = (between + within / r) / n + fixed + relative · Δ²

where `between` is the variance between items, `within` the variance of one item's repeats, and `fixed` a part
more items do not shrink (the calibration labels' share of a corrected estimator's variance; for a pass/fail
correction a part that grows with Δ itself, `relative`, from the judge's Youden J). A difference Δ is
detected with power 1 − β by a two-sided test at level α (the regression gate's 95% interval of the paired
difference) when Δ ≥ (z₁₋α/₂ + z₁₋β) · √Var: that bound is the *smallest detectable difference*, and inverting it
gives the items needed. Normal approximation; the variances come from past runs (`scoregate.app.plan`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALPHA = 0.05
REPEATS = (1, 2, 3, 5)
"""The repeats a plan shows items for (when the past runs measured the repeats' own variance)."""


@dataclass(frozen=True)
class Variance:
    """A metric's variance parts, and where they come from."""

    between: float
    """Between items: of the item means (paired: of the per-item differences), repeat noise taken out."""
    within: float | None
    """Of one item's repeats (None: no run measured it, so repeats are not planned)."""
    fixed: float = 0.0
    """What more items never shrink (the calibration labels' part of a corrected estimator)."""
    items: int = 0
    """Items the estimate rests on."""
    source: str = ""
    relative: float = 0.0
    """A part that grows with the difference, Δ² × relative, which more items never shrink either (a pass/fail
    correction's: the judge's Youden J estimated on the labels, Var(Ĵ)/J²)."""


@dataclass(frozen=True)
class PlanRow:
    """Items needed at one number of repeats (None: no number of items is enough, `reason` says why)."""

    repeats: int
    items: int | None
    reason: str | None = None


def z(p: float) -> float:
    """The standard normal quantile."""
    return statistics.NormalDist().inv_cdf(p)


def detectable(variance: Variance, items: int, repeats: int, *, power: float, alpha: float = ALPHA) -> float:
    """The smallest difference `items` × `repeats` detect with `power` (two-sided test at `alpha`)."""
    within = variance.within or 0.0
    var = (variance.between + within / repeats) / items + variance.fixed
    k = z(1 - alpha / 2) + z(power)
    left = 1 - k * k * variance.relative  # Δ = k·√(var + relative·Δ²), solved for Δ
    return k * math.sqrt(var / left) if left > 0 else math.inf


def items_needed(variance: Variance, detect: float, repeats: int, *, power: float, alpha: float = ALPHA) -> PlanRow:
    """The fewest items that detect `detect` with `power` at `repeats` repeats."""
    k = ((z(1 - alpha / 2) + z(power)) / detect) ** 2
    room = 1 / k - variance.fixed - variance.relative * detect * detect
    if room <= 0:
        return PlanRow(repeats, None, "the calibration labels alone leave more uncertainty: add human labels")
    per_item = variance.between + (variance.within or 0.0) / repeats
    return PlanRow(repeats, max(2, math.ceil(per_item / room - 1e-9)))


def plan_rows(variance: Variance, detect: float, *, power: float, alpha: float = ALPHA) -> list[PlanRow]:
    """Items needed at each number of repeats worth showing (only 1 when the repeats' variance is unknown)."""
    repeats = REPEATS if variance.within is not None else (1,)
    return [items_needed(variance, detect, r, power=power, alpha=alpha) for r in repeats]


def split_variance(values: Mapping[str, Sequence[float]]) -> tuple[float, float | None, float]:
    """(between, within, mean repeats) of per-item values over repeats: within is the pooled variance of the items
    measured at least twice (None without any), between the variance of the item means less within / repeats."""
    means = [statistics.fmean(v) for v in values.values() if v]
    if len(means) < 2:
        raise ValueError("a variance needs at least two measured items")
    repeated = [v for v in values.values() if len(v) >= 2]
    within = statistics.fmean(statistics.variance(v) for v in repeated) if repeated else None
    counts = [len(v) for v in values.values() if v]
    mean_repeats = statistics.fmean(counts)
    between = statistics.variance(means) - (within or 0.0) / mean_repeats
    return max(0.0, between), within, mean_repeats


def paired_variance(
    current: Mapping[str, Sequence[float]], reference: Mapping[str, Sequence[float]], within: float | None
) -> tuple[float, int]:
    """(between, items) of the per-item differences current − reference over the items both measured, the repeat
    noise of both sides taken out."""
    shared = [i for i in current if current[i] and reference.get(i)]
    if len(shared) < 2:
        raise ValueError("a paired variance needs at least two items measured in both runs")
    diffs = [statistics.fmean(current[i]) - statistics.fmean(reference[i]) for i in shared]
    noise = 0.0
    if within is not None:
        noise = within * statistics.fmean(1 / len(current[i]) + 1 / len(reference[i]) for i in shared)
    return max(0.0, statistics.variance(diffs) - noise), len(shared)


def corrected_fixed_variance(ci_low: float, ci_high: float, raw_variance_of_mean: float, *, level: float) -> float:
    """The part of a corrected estimate's variance more items do not shrink: its interval's variance less the raw
    mean's (PPI: the calibration labels' rectifier term)."""
    half = (ci_high - ci_low) / 2
    return max(0.0, (half / z(0.5 + level / 2)) ** 2 - raw_variance_of_mean)


def youden_relative(q0: float, q1: float, m0: int, m1: int) -> float:
    """Var(Ĵ)/J² of a judge's Youden J = q0 + q1 − 1 measured on m0 human fails and m1 human passes: a corrected
    difference of pass rates Δp/Ĵ varies by Δ² times this on top of Var(Δp)/J² (delta method)."""
    youden = q0 + q1 - 1
    return (q0 * (1 - q0) / m0 + q1 * (1 - q1) / m1) / (youden * youden)
