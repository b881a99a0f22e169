"""The corrected paired difference of two runs' pass rates, and a regression gate judged on it.

Both runs are scored by the same judge (a regression gate's baseline must be: same evaluator versions and judge
model), so one calibration set corrects both: with specificity q0 and sensitivity q1, each run's pass rate is
θ = (p + q0 − 1)/(q0 + q1 − 1), and their difference is Δθ = Δp/(q0 + q1 − 1). Its interval (delta method) holds the
paired items' spread and the calibration set's: se² = [var(d)/n + Δθ²·(var q0 + var q1)]/(q0 + q1 − 1)², the rates
shrunk by add-one pseudo-counts as for one run. The gate reads it as the raw regression gate reads its interval: the
same confidence, non-inferior when the lower bound of the gain is above −margin.

For 1-5 scores there is no corrected paired difference here: PPI++ would need human labels of both runs' outputs on
the same items, and a calibration set holds one judge's outputs rated once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from scoregate.analysis.corrected_estimators import (
    MIN_PER_CLASS,
    CorrectedEstimate,
    Method,
    corrected_point,
    is_binary,
    judge_rates,
    z_quantile,
)
from scoregate.analysis.gates import GateResult, new_gate_result
from scoregate.catalog.config_models import GateSpec

REGRESSION_STAT = "paired_noninferiority"
PASS_FAIL_ONLY = (
    "a corrected paired difference needs pass/fail scores: for other scores PPI++ would need human labels of both "
    "runs' outputs"
)
"""Why a score that is not pass/fail has no corrected paired difference."""


def corrected_difference(
    candidate: Sequence[float | None],
    baseline: Sequence[float | None],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    confidence: float = 0.95,
    min_per_class: int = MIN_PER_CLASS,
) -> CorrectedEstimate:
    """Return the corrected difference of pass rates (candidate − baseline) over the items measured in both
    (`candidate[i]` and `baseline[i]` are the same item), or null with the reason."""
    z = z_quantile(confidence)
    pairs = [(a, b) for a, b in zip(candidate, baseline, strict=True) if a is not None and b is not None]
    method: Method = "sensitivity-specificity"

    def null(reason: str, labels: int = 0) -> CorrectedEstimate:
        return CorrectedEstimate(method, None, None, None, confidence, len(pairs), labels, reason)

    if not is_binary(candidate, baseline, cal_judge, cal_human):
        return null(PASS_FAIL_ONLY)
    q0, q1, m0, m1 = judge_rates(cal_judge, cal_human)
    if len(pairs) < 2:
        return null(f"{len(pairs)} item(s) measured in both runs", m0 + m1)
    if min(m0, m1) < min_per_class:
        return null(
            f"the calibration set has {m0} human fail{'s' if m0 != 1 else ''} and {m1} human pass"
            f"{'es' if m1 != 1 else ''}: the correction needs at least {min_per_class} of each",
            m0 + m1,
        )
    if corrected_point(0.5, q0, q1) is None:
        return null(
            f"the judge is no better than chance on its calibration set: specificity {q0:.3f} + sensitivity "
            f"{q1:.3f} ≤ 1",
            m0 + m1,
        )
    d = np.array([a - b for a, b in pairs], dtype=float)
    judged = float(d.mean())
    q0a, q1a = (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    youden = q0a + q1a - 1
    centre = judged / youden
    rates = q0a * (1 - q0a) / (m0 + 2) + q1a * (1 - q1a) / (m1 + 2)
    se = math.sqrt((float(d.var()) / d.size + centre**2 * rates) / youden**2)
    figures: dict[str, float | int | None] = {"judged": judged, "q0": q0, "q1": q1, "m0": m0, "m1": m1, "se": se}
    value = min(1.0, max(-1.0, judged / (q0 + q1 - 1)))  # two pass rates differ by 1 at most, as the interval's ends
    low, high = max(-1.0, centre - z * se), min(1.0, centre + z * se)
    return CorrectedEstimate(method, value, low, high, confidence, d.size, m0 + m1, None, figures)


def judge_corrected_regression(
    gate: GateSpec,
    baseline: Mapping[str, float | None],
    current: Mapping[str, float | None],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    against: str,
    min_coverage: float = 0.8,
    confidence: float = 0.95,
    unavailable: str | None = None,
) -> GateResult:
    """Judge a regression gate on the corrected difference of pass rates: `observed` is the lower bound of the
    corrected gain, the rule `ci_low(gain) > −margin`; INCOMPLETE with the reason where it cannot be computed
    (`unavailable`: why the calibration set cannot serve)."""
    margin = float(0.2 if gate.margin is None else gate.margin)
    floor = gate.min_coverage if gate.min_coverage is not None else min_coverage
    higher = gate.op not in ("<=", "<")
    ids = [i for i in current if i in baseline]
    measured = [i for i in ids if current[i] is not None and baseline[i] is not None]
    coverage = len(measured) / len(current) if current else None

    def result(status: str, observed: float | None, detail: str) -> GateResult:
        made = new_gate_result(
            gate.name, gate.metric, REGRESSION_STAT, ">", -margin, observed, coverage, status,  # type: ignore[arg-type]
            f"{against}: {detail}",
        )  # fmt: skip
        return made.model_copy(update={"estimate": "corrected"})

    if coverage is not None and coverage < floor and len(measured) >= 2:
        return result("incomplete", None, f"paired coverage {coverage:.0%} is below the floor {floor:.0%}")
    if unavailable is not None:
        return result("incomplete", None, f"the corrected paired difference cannot be computed: {unavailable}")
    estimate = corrected_difference(
        [current[i] for i in ids], [baseline[i] for i in ids], cal_judge, cal_human, confidence=confidence
    )
    if estimate.value is None or estimate.ci_low is None or estimate.ci_high is None:
        return result("incomplete", None, f"the corrected paired difference cannot be computed: {estimate.reason}")
    gain_low = estimate.ci_low if higher else -estimate.ci_high
    ok = gain_low > -margin
    words = "non-inferior" if ok else "non-inferiority not shown"
    detail = (
        f"{len(measured)} paired items, corrected Δ {estimate.value:+.3g} ({confidence:.0%} CI "
        f"{estimate.ci_low:+.3g} to {estimate.ci_high:+.3g}, {estimate.n_labels} labels); {words} within the margin "
        f"{margin:g} (judged Δ {estimate.details['judged']:+.3g})"
    )
    return result("pass" if ok else "fail", gain_low, detail)
