"""Bias-corrected judge metrics: PPI++ for numeric scores, the sensitivity/specificity correction for pass/fail.

A judge's raw mean is biased when the judge errs systematically. A calibration set (items a human and the
judge both rated) measures that error; these estimators correct the run's mean for it and give an interval
that holds the calibration set's own uncertainty as well as the run's.

- `ppi_mean`: prediction-powered inference, power-tuned (PPI++, Angelopoulos, Duchi and Zrnic 2023,
  arXiv 2311.01453): θ̂ = λ·mean(judge on run items) + mean(human − λ·judge on the calibration set), λ chosen
  from the data to minimise the variance and clipped to [0, 1] (λ = 0 is the humans' own mean); a normal
  interval. The same arithmetic as `ppi_py.ppi_mean_ci` (the reference implementation).
- `corrected_rate`: θ̂ = (p + q0 − 1)/(q0 + q1 − 1), p the share the judge passed on the run, q0 its
  specificity and q1 its sensitivity on the calibration set (Lee et al. 2025, arXiv 2511.21140), clipped to
  [0, 1]; the interval by the delta method over the three binomial samples (run, human fails, human passes),
  each shrunk by pseudo-counts (Agresti–Coull for p, add-one for q0 and q1) so that small samples keep their
  coverage (bench/corrected_mc.py measures it).

Where a figure cannot be computed it is null with its reason (`CorrectedEstimate.reason`), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from scoregate.support.lazy_stats import stats

MIN_LABELS = 10
"""Fewest calibration pairs PPI++ rests on (its interval is a normal approximation)."""
MIN_PER_CLASS = 5
"""Fewest calibration items of each human class (fail, pass) the pass/fail correction rests on."""

Method = Literal["ppi++", "sensitivity-specificity"]
METHOD_NAMES: dict[str, str] = {"ppi++": "PPI++", "sensitivity-specificity": "sensitivity/specificity"}
"""Each method as a person reads it (`method_name` in the plain-dict form)."""


@dataclass(frozen=True)
class CorrectedEstimate:
    """A corrected mean with its interval; `value` is None when it cannot be computed and `reason` says why."""

    method: Method
    value: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_run: int
    """Run items with a judge score (the unlabelled sample)."""
    n_labels: int
    """Calibration pairs used (the labelled sample)."""
    reason: str | None = None
    details: dict[str, float | int | None] = field(default_factory=dict)
    """The method's own figures: λ for PPI++; p, q0, q1, m0, m1 for the pass/fail correction."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready), with the method's readable `method_name`."""
        return {**asdict(self), "method_name": METHOD_NAMES[self.method]}


def z_quantile(confidence: float) -> float:
    """Return the two-sided normal quantile of `confidence` (1.96 for 0.95); raise ValueError outside (0, 1)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence} is not between 0 and 1")
    return float(stats.norm.ppf(1 - (1 - confidence) / 2))


def _pairs(judge: Sequence[float | None], human: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    if len(judge) != len(human):
        raise ValueError(f"calibration pairs: {len(judge)} judge scores but {len(human)} human ones")
    kept = [(j, h) for j, h in zip(judge, human, strict=True) if j is not None and h is not None]
    return np.array([j for j, _ in kept], dtype=float), np.array([h for _, h in kept], dtype=float)


def _run_values(values: Sequence[float | None]) -> np.ndarray:
    return np.array([v for v in values if v is not None], dtype=float)


def power_tuning(human: np.ndarray, judge: np.ndarray, run: np.ndarray) -> float:
    """Return PPI++'s λ for a mean: cov(human, judge) / ((1 + n/N)·var(judge, both samples)), clipped to [0, 1]."""
    n, big_n = human.size, run.size
    covariance = float(np.mean((human - human.mean()) * (judge - judge.mean())))
    variance = float(np.var(np.concatenate([judge, run]), ddof=1))
    if variance <= 0:
        return 0.0  # a constant judge says nothing: the humans' own mean
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(
    run_judge: Sequence[float | None],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    min_labels: int = MIN_LABELS,
    small_sample: bool = True,
) -> CorrectedEstimate:
    """Return the PPI++ mean of the human-rated truth from the run's judge scores and the calibration pairs.

    `lam` fixes the power tuning (1: plain PPI, 0: the humans' mean alone); None tunes it from the data.
    `small_sample` widens the interval for few labels: sample variances (n − 1) and Student's t with the
    Welch–Satterthwaite degrees of freedom of the two terms. False gives the normal interval of the reference
    implementation (`ppi_py.ppi_mean_ci`), which covers a little under 95% with 30 labels (bench/corrected_mc.py).
    """
    z = z_quantile(confidence)
    run = _run_values(run_judge)
    judge, human = _pairs(cal_judge, cal_human)
    n, big_n = human.size, run.size

    def null(reason: str) -> CorrectedEstimate:
        return CorrectedEstimate("ppi++", None, None, None, confidence, big_n, n, reason)

    if n < min_labels:
        return null(
            f"{n} calibration pair{'s' if n != 1 else ''} of judge and human: PPI++ needs at least {min_labels}"
        )
    if big_n < 2:
        return null(f"{big_n} run item{'s' if big_n != 1 else ''} with a judge score: PPI++ needs at least 2")
    tuned = power_tuning(human, judge, run) if lam is None else lam
    estimate = tuned * float(run.mean()) + float(np.mean(human - tuned * judge))
    ddof = 1 if small_sample else 0
    imputed = tuned**2 * float(np.var(run, ddof=ddof)) / big_n
    rectifier = float(np.var(human - tuned * judge, ddof=ddof)) / n
    se = math.sqrt(imputed + rectifier)
    if small_sample and se > 0:
        freedom = (imputed + rectifier) ** 2 / (imputed**2 / (big_n - 1) + rectifier**2 / (n - 1))
        z = float(stats.t.ppf(1 - (1 - confidence) / 2, freedom))
    return CorrectedEstimate(
        "ppi++", estimate, estimate - z * se, estimate + z * se, confidence, big_n, n, None, {"lambda": tuned, "se": se}
    )


def corrected_point(p: float, q0: float, q1: float) -> float | None:
    """Return θ̂ = (p + q0 − 1)/(q0 + q1 − 1) clipped to [0, 1]; None when q0 + q1 ≤ 1 (no better than chance)."""
    if q0 + q1 <= 1:
        return None
    return min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))


def corrected_rate(
    p: float, q0: float, q1: float, n: int, m0: int, m1: int, *, confidence: float = 0.95, min_per_class: int = 1
) -> CorrectedEstimate:
    """Return the corrected pass rate from the judged pass share `p` of `n` run items, specificity `q0` on `m0`
    human fails and sensitivity `q1` on `m1` human passes, with its delta-method interval."""
    z = z_quantile(confidence)
    figures: dict[str, float | int | None] = {"p": p, "q0": q0, "q1": q1, "m0": m0, "m1": m1}

    def null(reason: str) -> CorrectedEstimate:
        return CorrectedEstimate("sensitivity-specificity", None, None, None, confidence, n, m0 + m1, reason, figures)

    if n < 1:
        return null("no run item has a judge verdict")
    if min(m0, m1) < min_per_class:
        return null(
            f"the calibration set has {m0} human fail{'s' if m0 != 1 else ''} and {m1} human pass"
            f"{'es' if m1 != 1 else ''}: the correction needs at least {min_per_class} of each"
        )
    point = corrected_point(p, q0, q1)
    if point is None:
        return null(
            f"the judge is no better than chance on its calibration set: specificity {q0:.3f} + sensitivity "
            f"{q1:.3f} ≤ 1"
        )
    z2 = z * z
    pa, na = (n * p + z2 / 2) / (n + z2), n + z2
    q0a, m0a = (m0 * q0 + 1) / (m0 + 2), m0 + 2
    q1a, m1a = (m1 * q1 + 1) / (m1 + 2), m1 + 2
    youden = q0a + q1a - 1
    centre = (pa + q0a - 1) / youden
    variance = (pa * (1 - pa) / na + (1 - centre) ** 2 * q0a * (1 - q0a) / m0a + centre**2 * q1a * (1 - q1a) / m1a) / (
        youden**2
    )
    se = math.sqrt(variance)
    low, high = max(0.0, centre - z * se), min(1.0, centre + z * se)
    return CorrectedEstimate(
        "sensitivity-specificity", point, low, high, confidence, n, m0 + m1, None, {**figures, "se": se}
    )


def _as_verdict(value: float, what: str) -> bool:
    if value not in (0.0, 1.0):
        raise ValueError(f"{what} {value:g} is not a pass/fail verdict (0 or 1)")
    return bool(value == 1.0)


def judge_rates(cal_judge: Sequence[float | None], cal_human: Sequence[float | None]) -> tuple[float, float, int, int]:
    """Return (specificity q0, sensitivity q1, human fails m0, human passes m1) of 0/1 calibration pairs (a rate of
    an empty class is NaN); raise ValueError on a value other than 0 or 1."""
    judge, human = _pairs(cal_judge, cal_human)
    said = [_as_verdict(v, "calibration judge verdict") for v in judge]
    truth = [_as_verdict(v, "human verdict") for v in human]
    m1 = sum(truth)
    m0 = len(truth) - m1
    q1 = sum(s for s, t in zip(said, truth, strict=True) if t) / m1 if m1 else math.nan
    q0 = sum(not s for s, t in zip(said, truth, strict=True) if not t) / m0 if m0 else math.nan
    return q0, q1, m0, m1


def pass_rate(
    run_judge: Sequence[float | None],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    confidence: float = 0.95,
    min_per_class: int = MIN_PER_CLASS,
) -> CorrectedEstimate:
    """Return the corrected pass rate of 0/1 judge verdicts on the run, from 0/1 calibration pairs."""
    run = [_as_verdict(v, "run judge verdict") for v in _run_values(run_judge)]
    q0, q1, m0, m1 = judge_rates(cal_judge, cal_human)
    p = sum(run) / len(run) if run else math.nan
    return corrected_rate(p, q0, q1, len(run), m0, m1, confidence=confidence, min_per_class=min_per_class)


def is_binary(*columns: Sequence[float | None]) -> bool:
    """True when every measured value of every column is 0 or 1 (a pass/fail score)."""
    return all(v in (0.0, 1.0) for column in columns for v in column if v is not None)


def corrected_mean(
    run_judge: Sequence[float | None],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    confidence: float = 0.95,
) -> CorrectedEstimate:
    """Return the corrected mean of a judge score: the pass/fail correction when every score and label is 0/1,
    else PPI++."""
    if is_binary(run_judge, cal_judge, cal_human):
        return pass_rate(run_judge, cal_judge, cal_human, confidence=confidence)
    return ppi_mean(run_judge, cal_judge, cal_human, confidence=confidence)
