"""The corrected paired difference of two runs' pass rates, and the regression gate judged on it."""

from __future__ import annotations

import math

import pytest

from scoregate.analysis.corrected_difference import corrected_difference, judge_corrected_regression
from scoregate.catalog.config_models import GateSpec

# The calibration set: 10 human fails, the judge fails 7 (q0 = 0.7); 10 human passes, it passes 9 (q1 = 0.9).
CAL_HUMAN = [0.0] * 10 + [1.0] * 10
CAL_JUDGE = [0.0] * 7 + [1.0] * 3 + [1.0] * 9 + [0.0]
Z95 = 1.959963984540054


def _runs(n: int, candidate_passes: int, baseline_passes: int) -> tuple[list[float | None], list[float | None]]:
    return [1.0] * candidate_passes + [0.0] * (n - candidate_passes), [1.0] * baseline_passes + [0.0] * (
        n - baseline_passes
    )


def test_the_corrected_difference_is_the_judged_difference_over_q0_plus_q1_minus_one() -> None:
    # Candidate passes 50 of 100, baseline 40 of the same 100 (the first 40 in both): Δp = 0.1, Δθ = 0.1/0.6.
    candidate, baseline = _runs(100, 50, 40)
    estimate = corrected_difference(candidate, baseline, CAL_JUDGE, CAL_HUMAN)
    assert estimate.value == pytest.approx(1 / 6)
    # se² = [var(d)/n + Δ²·(q0(1−q0)/m0 + q1(1−q1)/m1)] / J², the rates shrunk by add-one (m + 2) as for one run.
    q0, q1, m0, m1 = 8 / 12, 10 / 12, 12, 12
    youden = q0 + q1 - 1
    var_d = 0.1 * 0.9  # d is 1 on 10 items, 0 on 90: population variance 0.09
    delta = 0.1 / youden
    se = math.sqrt((var_d / 100 + delta**2 * (q0 * (1 - q0) / m0 + q1 * (1 - q1) / m1)) / youden**2)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx((delta - Z95 * se, delta + Z95 * se))
    assert estimate.n_run == 100 and estimate.n_labels == 20


def test_numeric_scores_have_no_corrected_paired_difference_and_say_why() -> None:
    estimate = corrected_difference([4.0, 3.0], [3.0, 3.0], [4.0] * 12, [3.0] * 12)
    assert estimate.value is None
    assert estimate.reason is not None and "needs pass/fail scores" in estimate.reason


def _gate(margin: float) -> GateSpec:
    return GateSpec(
        name="no_regression", metric="passed", op=">=", threshold=0, stat="paired_noninferiority",
        compare_to="production", margin=margin, estimate="corrected",
    )  # fmt: skip


def test_a_drop_within_the_margin_on_the_judge_is_beyond_it_once_corrected() -> None:
    # The judge sees a drop of 0.06 (0.36 → 0.30 on 500 items); corrected it is 0.06/0.6 = 0.1.
    baseline = {f"i{k}": 1.0 if k < 180 else 0.0 for k in range(500)}
    current = {f"i{k}": 1.0 if k < 150 else 0.0 for k in range(500)}
    result = judge_corrected_regression(
        _gate(0.1), baseline, current, CAL_JUDGE, CAL_HUMAN, against="vs production run prod"
    )
    assert result.status == "fail" and result.estimate == "corrected"
    assert result.observed is not None and result.observed < -0.1
    assert result.detail is not None
    assert result.detail.startswith("vs production run prod: 500 paired items, corrected Δ -0.1 (95% CI")
    assert "non-inferiority not shown within the margin 0.1 (judged Δ -0.06)" in result.detail


def test_a_calibration_that_cannot_correct_leaves_the_regression_gate_incomplete() -> None:
    baseline = {"a": 1.0, "b": 0.0, "c": 1.0}
    current = {"a": 1.0, "b": 1.0, "c": 1.0}
    result = judge_corrected_regression(_gate(0.2), baseline, current, [1.0] * 12, [1.0] * 12, against="vs prod")
    assert result.status == "incomplete" and result.observed is None
    assert result.detail == (
        "vs prod: the corrected paired difference cannot be computed: the calibration set has 0 human fails and 12 "
        "human passes: the correction needs at least 5 of each"
    )


def test_a_corrected_difference_never_lies_outside_what_two_pass_rates_can_differ_by() -> None:
    # Every item passed by the judge in the baseline, failed in the candidate: Δp = −1, and −1/0.6 is no difference of
    # two rates; the human-rated pass rates can differ by −1 at most.
    candidate, baseline = _runs(30, 0, 30)
    estimate = corrected_difference(candidate, baseline, CAL_JUDGE, CAL_HUMAN)
    assert estimate.value == -1.0
    assert estimate.details["judged"] == -1.0
