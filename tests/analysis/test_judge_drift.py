"""Judge drift: the paired change in agreement with humans between a calibration and a canary re-score."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.judge_drift import judge_drift


def ratings(n: int, seed: int) -> tuple[list[float], list[float], list[float]]:
    """Human 1-5 ratings, a judge that tracks them closely, and one that has lost them (random)."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    good = np.clip(human + rng.integers(-1, 2, n), 1, 5)
    noise = rng.integers(1, 6, n).astype(float)
    return list(human), list(good), list(noise)


def test_a_judge_that_scores_as_before_has_not_drifted() -> None:
    human, good, _ = ratings(60, 1)
    drift = judge_drift(good, good, human, tolerance=0.1, resamples=200)
    assert drift.status == "ok"
    assert drift.change.value == pytest.approx(0.0)
    assert drift.calibrated == drift.canary == pytest.approx(stats.spearmanr(good, human).statistic)
    assert "within the tolerance of -0.1" in drift.detail


def test_a_judge_that_lost_the_humans_has_drifted_with_a_ci_below_zero() -> None:
    human, good, noise = ratings(200, 2)
    drift = judge_drift(good, noise, human, tolerance=0.1, resamples=500)
    expected = stats.spearmanr(noise, human).statistic - stats.spearmanr(good, human).statistic
    assert drift.change.value == pytest.approx(expected)
    assert drift.change.value < -0.5
    assert drift.change.ci_low is not None and drift.change.ci_high is not None
    assert drift.change.ci_low < drift.change.value < drift.change.ci_high < -0.1
    assert drift.status == "drifted"
    assert "beyond the tolerance of -0.1" in drift.detail and "n=200" in drift.detail


def test_ci_high_only_calls_a_drift_the_interval_is_sure_of() -> None:
    human = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 4.0]
    good = list(human)
    worse = list(good)
    worse[0], worse[1] = worse[1], worse[0]  # one swap of neighbouring ratings: the CI reaches zero
    by_value = judge_drift(good, worse, human, tolerance=0.0, resamples=300)
    assert by_value.change.value is not None and by_value.change.value < 0
    assert by_value.status == "drifted"
    by_ci = judge_drift(good, worse, human, tolerance=0.0, stat="ci_high", resamples=300)
    assert by_ci.change.ci_high is not None and by_ci.change.ci_high >= 0
    assert by_ci.status == "ok"


def test_items_missing_a_score_are_left_out_and_scaled_metrics_need_a_scale() -> None:
    human, good, _ = ratings(30, 4)
    canary: list[float | None] = list(good)
    canary[0] = None
    drift = judge_drift(good, canary, human, resamples=200)
    assert drift.n_pairs == 29
    unscaled = judge_drift(good, good, human, metric="qwk", resamples=200)
    assert unscaled.status == "unknown" and unscaled.change.value is None
    assert "needs integer ratings" in unscaled.detail
    scaled = judge_drift(good, good, human, metric="exact", scale=(1, 5), resamples=200)
    assert scaled.status == "ok" and scaled.canary == pytest.approx(np.mean(np.equal(good, human)))
