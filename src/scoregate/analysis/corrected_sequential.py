"""Stop early on the corrected difference of pass rates: a confidence sequence for the run, a fixed interval for the
calibration set, at a split α.

The judge passes a human pass with probability q1 (sensitivity) and a human fail with probability 1 − q0 (q0:
specificity), whatever the item and whichever prompt wrote it. Then a run's judged pass rate is p = (1 − q0) + J·θ
with J = q0 + q1 − 1 (Youden's index), and for the paired difference of candidate and reference,
Δp = J·Δθ: the human-rated difference is Δθ = Δp/J.

The calibration set is fixed before the run, so the two sources of error are separate:

- the run's judged differences d_i ∈ [−1, 1] give the anytime-valid confidence sequence [L_t, U_t] of
  `analysis.sequential` at level 1 − α_run: P(∃t: Δp ∉ [L_t, U_t]) ≤ α_run;
- the calibration set gives a fixed interval [J_lo, J_hi] from exact Clopper–Pearson intervals for q0 (its m0 human
  fails) and q1 (its m1 human passes), each at level 1 − α_cal/2: P(J ∉ [J_lo, J_hi]) ≤ α_cal.

On the event that both hold (probability ≥ 1 − α_run − α_cal by the union bound, for every look at once) and with
J_lo > 0, Δθ = Δp/J lies in [L_t/J_lo, U_t/J_hi] where the bounds are negative and [L_t/J_hi, U_t/J_lo] where they
are positive (the ratio's extremes over the box). So a rule that stops when this interval excludes the gate's
threshold errs with probability at most α = α_run + α_cal, however many looks it takes (here α_run = α_cal = α/2).
`bench/corrected_sequential_mc.py` measures it with a look after every batch. A calibration set whose J_lo ≤ 0
cannot show the judge better than chance at that level, and no corrected stop is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from scoregate.analysis.corrected_estimators import MIN_PER_CLASS, judge_rates
from scoregate.analysis.sequential import SequenceBounds
from scoregate.analysis.sequential_stop import SequentialMonitor, StopDecision, StopRule, decide
from scoregate.support.lazy_stats import stats

RUN_SHARE = 0.5
"""The share of α the run's confidence sequence gets; the calibration set's interval gets the rest."""
CORRECTED_RULE = (
    "corrected for the judge's bias: the confidence sequence of the judged difference at alpha/2, divided by the "
    "calibration set's Clopper-Pearson interval of Youden's J = q0 + q1 - 1 at alpha/2 (the ratio's extremes)"
)


@dataclass(frozen=True)
class YoudenBound:
    """The judge's Youden index J = q0 + q1 − 1 from its calibration set, with a fixed interval at 1 − alpha."""

    low: float
    high: float
    q0: float
    q1: float
    m0: int
    m1: int
    alpha: float

    @property
    def point(self) -> float:
        """J's point estimate, q0 + q1 − 1."""
        return self.q0 + self.q1 - 1

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form with the rule in words."""
        return {**asdict(self), "labels": self.m0 + self.m1, "rule": CORRECTED_RULE}


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Return the exact two-sided 1 − alpha interval of a binomial proportion."""
    low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(stats.beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return low, high


def youden_bound(
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    alpha: float,
    min_per_class: int = MIN_PER_CLASS,
) -> YoudenBound | str:
    """Return J's interval at 1 − alpha (q0 and q1 each at 1 − alpha/2) from 0/1 calibration pairs, or why it
    cannot serve a corrected stop (too few of a class, or an interval that reaches 0); raise ValueError on a value
    other than 0 or 1."""
    q0, q1, m0, m1 = judge_rates(cal_judge, cal_human)
    if min(m0, m1) < min_per_class:
        return (
            f"the calibration set has {m0} human fail{'s' if m0 != 1 else ''} and {m1} human pass"
            f"{'es' if m1 != 1 else ''}: the correction needs at least {min_per_class} of each"
        )
    low0, high0 = clopper_pearson(round(q0 * m0), m0, alpha / 2)
    low1, high1 = clopper_pearson(round(q1 * m1), m1, alpha / 2)
    bound = YoudenBound(low0 + low1 - 1, high0 + high1 - 1, q0, q1, m0, m1, alpha)
    if bound.low <= 0:
        return (
            f"its calibration set ({m0} human fails, {m1} passes; specificity {q0:.3f}, sensitivity {q1:.3f}) cannot "
            f"show the judge better than chance at {1 - alpha:.1%}: Youden's J = q0 + q1 − 1 has the interval "
            f"[{bound.low:.3f}, {bound.high:.3f}], which reaches 0"
        )
    return bound


def corrected_bounds(lower: float, upper: float, bound: YoudenBound) -> tuple[float, float]:
    """Return the bounds of Δθ = Δp/J from Δp ∈ [lower, upper] and J ∈ [bound.low, bound.high] (J > 0)."""
    low = lower / bound.low if lower < 0 else lower / bound.high
    high = upper / bound.high if upper < 0 else upper / bound.low
    return max(-1.0, low), min(1.0, high)


class CorrectedMonitor:
    """A `SequentialMonitor` on the judged differences (its rule's alpha is the run's share), read on the corrected
    scale: its bounds and decisions are those of Δθ = Δp/J."""

    def __init__(self, rule: StopRule, total: int, bound: YoudenBound) -> None:
        self.rule, self.total, self.bound = rule, total, bound
        self._judged = SequentialMonitor(rule, total)

    @property
    def n(self) -> int:
        """Differences seen so far."""
        return self._judged.n

    def add(
        self,
        differences: Sequence[float] | np.ndarray,
        *,
        cost: float | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> StopDecision:
        """Add one batch of judged differences and return the decision on the corrected difference at this look."""
        self._judged.add(differences, cost=cost, item_ids=item_ids)
        return decide(self.bounds(), self.rule, total=self.total, cost=cost)

    def bounds(self) -> SequenceBounds:
        """Return the corrected sequence at every look so far (the judged one's running bounds, divided by J)."""
        judged = self._judged.bounds()
        pairs = [corrected_bounds(lo, hi, self.bound) for lo, hi in zip(judged.lower, judged.upper, strict=True)]
        return SequenceBounds(
            judged.method, judged.alpha, judged.lo, judged.hi, judged.looks, tuple(p[0] for p in pairs),
            tuple(p[1] for p in pairs), judged.mean / self.bound.point,
        )  # fmt: skip
