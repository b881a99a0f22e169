"""Descriptive statistics: coverage, None handling, bootstrap CI of the mean, memory on large runs."""

from __future__ import annotations

import statistics
import tracemalloc

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.stats import describe, percentiles


def test_unmeasured_values_lower_coverage_and_never_count_as_zero() -> None:
    result = describe([1.0, 2.0, None, 3.0, 4.0])
    assert (result.n_total, result.n_measured, result.coverage) == (5, 4, 0.8)
    assert result.mean == 2.5
    assert result.median == 2.5
    assert result.std == pytest.approx(statistics.stdev([1.0, 2.0, 3.0, 4.0]))
    assert (result.min, result.max) == (1.0, 4.0)
    assert result.ci_low is not None and result.ci_high is not None
    assert result.ci_low < result.mean < result.ci_high


def test_ci_is_scipy_bca_interval_for_small_samples() -> None:
    values = list(np.random.default_rng(7).gamma(2.0, size=60))
    result = describe(values, resamples=1000, seed=3)
    expected = stats.bootstrap(
        (np.asarray(values),), np.mean, n_resamples=1000, method="BCa", rng=np.random.default_rng(3)
    ).confidence_interval
    assert result.ci_method == "bca"
    assert result.ci_low == pytest.approx(expected.low)
    assert result.ci_high == pytest.approx(expected.high)


def test_ci_is_deterministic_for_a_seed_and_changes_with_it() -> None:
    values = list(np.random.default_rng(1).normal(size=50))
    assert describe(values, seed=5) == describe(values, seed=5)
    assert describe(values, seed=5).ci_low != describe(values, seed=6).ci_low


def test_wider_confidence_gives_wider_interval() -> None:
    values = list(np.random.default_rng(2).normal(size=80))
    narrow, wide = describe(values, confidence=0.8), describe(values, confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high  # type: ignore[operator]


def test_nothing_measured_gives_none_everywhere() -> None:
    result = describe([None, None, None])
    assert (result.n_total, result.n_measured, result.coverage) == (3, 0, 0.0)
    undefined = (result.mean, result.median, result.std, result.ci_low, result.ci_high, result.min, result.max)
    assert undefined == (None,) * 7
    assert describe([]).coverage is None


def test_single_value_has_a_mean_but_no_spread_or_interval() -> None:
    result = describe([None, 4.0])
    assert (result.mean, result.min, result.max) == (4.0, 4.0, 4.0)
    assert (result.std, result.ci_low, result.ci_high) == (None, None, None)


@pytest.mark.filterwarnings("error")
def test_identical_values_give_a_zero_width_interval_without_warnings() -> None:
    result = describe([3.0] * 40)
    assert (result.ci_low, result.ci_high) == (3.0, 3.0)
    assert result.std == 0.0


def test_nan_is_rejected_because_none_means_unmeasured() -> None:
    with pytest.raises(ValueError, match="use None"):
        describe([1.0, float("nan")])


@pytest.mark.scale
def test_large_runs_switch_to_percentile_and_stay_within_memory() -> None:
    values = list(np.random.default_rng(0).normal(loc=0.5, size=100_000))
    tracemalloc.start()
    try:
        result = describe(values)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 * 1024, f"peak extra memory {peak / 2**20:.0f} MiB"
    assert result.ci_method == "percentile"
    assert result.ci_low < float(np.mean(values)) < result.ci_high  # type: ignore[operator]
    # The standard error of the mean here is 1/sqrt(100000) ≈ 0.0032; a 95% CI spans about 4 of them.
    assert result.ci_high - result.ci_low == pytest.approx(2 * 1.96 / np.sqrt(100_000), rel=0.15)  # type: ignore[operator]


def test_percentiles_match_numpy_and_skip_unmeasured() -> None:
    values = [float(v) for v in range(1, 101)]
    result = percentiles([*values, None])
    assert result == {
        "p50": np.percentile(values, 50),
        "p95": np.percentile(values, 95),
        "p99": np.percentile(values, 99),
    }
    assert percentiles(values, qs=(99.9,)) == {"p99.9": np.percentile(values, 99.9)}
    assert percentiles([None]) == {"p50": None, "p95": None, "p99": None}
