"""Bias-corrected judge metrics: known answers, an independent computation of PPI, and every null reason."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from scoregate.analysis.corrected_estimators import (
    corrected_mean,
    corrected_point,
    corrected_rate,
    pass_rate,
    ppi_mean,
)

# A hand-written calibration set (human and judge on the same 10 items) and a run's 12 judge scores (1-5 scale).
HUMAN = [3, 4, 2, 5, 4, 3, 1, 4, 5, 2]
JUDGE = [4, 4, 3, 5, 5, 3, 2, 4, 5, 3]
RUN = [4, 5, 3, 4, 2, 5, 4, 3, 4, 5, 3, 4]
Z95 = 1.959963984540054


def _population_variance(values: list[Fraction]) -> Fraction:
    mean = sum(values, Fraction(0)) / len(values)
    return sum(((v - mean) ** 2 for v in values), Fraction(0)) / len(values)


def test_the_papers_usage_example_gives_one_sixth() -> None:
    # θ̂ = (0.4 + 0.7 − 1) / (0.7 + 0.9 − 1) = 0.1 / 0.6
    assert corrected_point(0.4, 0.7, 0.9) == pytest.approx(0.1667, abs=5e-5)
    estimate = corrected_rate(0.4, 0.7, 0.9, n=100, m0=50, m1=50)
    assert estimate.value == pytest.approx(1 / 6)
    assert estimate.ci_low is not None and estimate.ci_high is not None
    assert estimate.ci_low <= estimate.value <= estimate.ci_high
    assert estimate.reason is None


def test_plain_ppi_equals_the_hand_computation() -> None:
    # λ = 1: θ̂ = mean(run) + mean(human − judge) = 46/12 − 5/10 = 10/3;
    # se² = var(run)/12 + var(human − judge)/10 (population variances), interval θ̂ ± z·se.
    theta = Fraction(46, 12) + Fraction(-5, 10)
    rectifier = [Fraction(h - j) for h, j in zip(HUMAN, JUDGE, strict=True)]
    se = math.sqrt(_population_variance([Fraction(v) for v in RUN]) / 12 + _population_variance(rectifier) / 10)
    estimate = ppi_mean(RUN, JUDGE, HUMAN, lam=1.0, small_sample=False)
    assert estimate.value == pytest.approx(float(theta))
    assert estimate.ci_low == pytest.approx(float(theta) - Z95 * se)
    assert estimate.ci_high == pytest.approx(float(theta) + Z95 * se)


def test_power_tuned_ppi_equals_the_hand_computation_and_the_reference_library() -> None:
    # λ = cov(human, judge) / ((1 + n/N) · var(judge over both samples, n − 1)), clipped to [0, 1]:
    # then θ̂ = λ·mean(run) + mean(human − λ·judge), se² = λ²·var(run)/N + var(human − λ·judge)/n. Exact fractions.
    n, big_n = len(HUMAN), len(RUN)
    h_mean, j_mean = Fraction(sum(HUMAN), n), Fraction(sum(JUDGE), n)
    cov = sum(((h - h_mean) * (j - j_mean) for h, j in zip(HUMAN, JUDGE, strict=True)), Fraction(0)) / n
    both = [Fraction(v) for v in JUDGE + RUN]
    both_mean = sum(both, Fraction(0)) / len(both)
    var = sum(((v - both_mean) ** 2 for v in both), Fraction(0)) / (len(both) - 1)
    lam = cov / ((1 + Fraction(n, big_n)) * var)
    theta = (
        lam * Fraction(sum(RUN), big_n) + sum((h - lam * j for h, j in zip(HUMAN, JUDGE, strict=True)), Fraction(0)) / n
    )
    se = math.sqrt(
        lam**2 * _population_variance([Fraction(v) for v in RUN]) / big_n
        + _population_variance([h - lam * j for h, j in zip(HUMAN, JUDGE, strict=True)]) / n
    )
    estimate = ppi_mean(RUN, JUDGE, HUMAN, small_sample=False)
    assert estimate.details["lambda"] == pytest.approx(float(lam))
    assert estimate.value == pytest.approx(float(theta))
    assert estimate.ci_low == pytest.approx(float(theta) - Z95 * se)
    assert estimate.ci_high == pytest.approx(float(theta) + Z95 * se)
    # ppi_py 0.2.3 `ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05)` on the same table:
    assert (estimate.value, estimate.ci_low, estimate.ci_high) == pytest.approx(
        (3.32298113, 2.77352675721948, 3.8724355069314638)
    )


def test_the_small_sample_interval_uses_t_with_welch_satterthwaite_freedom() -> None:
    # λ = 1: a = var(run, n − 1)/12, b = var(human − judge, n − 1)/10, df = (a + b)² / (a²/11 + b²/9).
    a = float(_population_variance([Fraction(v) for v in RUN]) * 12 / 11) / 12
    rectifier = [Fraction(h - j) for h, j in zip(HUMAN, JUDGE, strict=True)]
    b = float(_population_variance(rectifier) * 10 / 9) / 10
    freedom = (a + b) ** 2 / (a**2 / 11 + b**2 / 9)
    half = stats.t.ppf(0.975, freedom) * math.sqrt(a + b)
    estimate = ppi_mean(RUN, JUDGE, HUMAN, lam=1.0)
    assert estimate.value == pytest.approx(10 / 3)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx((10 / 3 - half, 10 / 3 + half))
    reference = ppi_mean(RUN, JUDGE, HUMAN, lam=1.0, small_sample=False)
    assert reference.ci_low is not None and estimate.ci_low < reference.ci_low


def test_unmeasured_items_are_left_out_not_counted_as_zero() -> None:
    with_gaps = ppi_mean([*RUN, None], [*JUDGE, None], [*HUMAN, 4], lam=1.0)
    assert with_gaps.value == pytest.approx(10 / 3)
    assert (with_gaps.n_run, with_gaps.n_labels) == (12, 10)


def test_too_few_labels_is_null_with_the_reason() -> None:
    estimate = ppi_mean(RUN, JUDGE[:4], HUMAN[:4])
    assert estimate.value is None and estimate.ci_low is None
    assert estimate.reason == "4 calibration pairs of judge and human: PPI++ needs at least 10"


def test_a_judge_no_better_than_chance_is_null_with_the_reason() -> None:
    estimate = corrected_rate(0.5, 0.4, 0.6, n=100, m0=50, m1=50)
    assert estimate.value is None
    assert estimate.reason is not None and "no better than chance" in estimate.reason
    assert "0.400 + sensitivity 0.600 ≤ 1" in estimate.reason


def test_pass_rate_from_pairs_counts_specificity_and_sensitivity() -> None:
    # 10 human fails, the judge fails 7 (q0 = 0.7); 10 human passes, the judge passes 9 (q1 = 0.9).
    human = [0.0] * 10 + [1.0] * 10
    judge = [0.0] * 7 + [1.0] * 3 + [1.0] * 9 + [0.0]
    run = [1.0] * 40 + [0.0] * 60  # p = 0.4
    estimate = pass_rate(run, judge, human)
    assert estimate.value == pytest.approx(1 / 6)
    assert (estimate.details["q0"], estimate.details["q1"], estimate.details["p"]) == (0.7, 0.9, 0.4)
    assert (estimate.details["m0"], estimate.details["m1"]) == (10, 10)
    assert corrected_mean(run, judge, human).method == "sensitivity-specificity"
    assert corrected_mean(RUN, JUDGE, HUMAN).method == "ppi++"


def test_a_calibration_set_without_one_class_is_null_with_the_reason() -> None:
    estimate = pass_rate([1.0, 0.0, 1.0], [1.0] * 12, [1.0] * 12)
    assert estimate.value is None
    assert estimate.reason == (
        "the calibration set has 0 human fails and 12 human passes: the correction needs at least 5 of each"
    )


def test_a_verdict_other_than_zero_or_one_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"run judge verdict 0\.5 is not a pass/fail verdict"):
        pass_rate([0.5], [1.0], [1.0])


def test_the_corrected_interval_is_wider_than_the_run_alone_would_say() -> None:
    # The calibration set's own uncertainty widens the interval: with 20 labels it is wider than with 2,000.
    small = corrected_rate(0.4, 0.7, 0.9, n=1000, m0=10, m1=10)
    large = corrected_rate(0.4, 0.7, 0.9, n=1000, m0=1000, m1=1000)
    assert small.ci_low is not None and small.ci_high is not None
    assert large.ci_low is not None and large.ci_high is not None
    assert small.ci_high - small.ci_low > 2 * (large.ci_high - large.ci_low)
