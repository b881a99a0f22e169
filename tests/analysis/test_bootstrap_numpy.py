"""The numpy bootstrap gives scipy.stats.bootstrap's intervals for the same seed, without importing scipy."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.bootstrap import _ndtr, _ndtri, _quantile, bootstrap
from scoregate.analysis.calibration import _kendall, _pearson, _spearman
from scoregate.analysis.stats import BATCH_ELEMENTS, BCA_MAX_N, bootstrap_ci

REL = 1e-12


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y, axis=axis) - np.mean(x, axis=axis)


def _median_difference(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.median(y) - np.median(x))


def _corrcoef(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def _scipy(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., Any],
    *,
    vectorized: bool,
    paired: bool = False,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Any:
    """scipy.stats.bootstrap with the method and batch size bootstrap_ci picks."""
    n = len(data[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.bootstrap(
            data,
            statistic,
            n_resamples=resamples,
            batch=max(1, min(resamples, BATCH_ELEMENTS // n)),
            vectorized=vectorized,
            paired=paired,
            confidence_level=confidence,
            method="BCa" if n <= BCA_MAX_N else "percentile",
            rng=np.random.default_rng(seed),
        )


def _assert_close(ours: float | None, theirs: float) -> None:
    assert ours is not None
    assert ours == pytest.approx(theirs, rel=REL, abs=1e-300)


def _assert_same_interval(data: tuple[np.ndarray, ...], statistic: Callable[..., Any], **options: Any) -> str | None:
    """Check bootstrap_ci against scipy, whose interval must be finite here; return the method used."""
    expected = _scipy(data, statistic, **options).confidence_interval
    assert math.isfinite(expected.low) and math.isfinite(expected.high)
    low, high, method = bootstrap_ci(data, statistic, **options)
    _assert_close(low, expected.low)
    _assert_close(high, expected.high)
    return method


@pytest.mark.parametrize("n", [2, 3, 30, 500, 2000])
@pytest.mark.parametrize("seed", [0, 7])
def test_mean_bca_matches_scipy(n: int, seed: int) -> None:
    x = np.random.default_rng(n + seed).normal(loc=3.0, size=n)
    assert _assert_same_interval((x,), _mean, vectorized=True, seed=seed) == "bca"


@pytest.mark.parametrize("n", [2001, 5000])
def test_mean_percentile_above_the_bca_limit_matches_scipy_exactly(n: int) -> None:
    x = np.random.default_rng(n).exponential(size=n)
    expected = _scipy((x,), _mean, vectorized=True, seed=3).confidence_interval
    assert bootstrap_ci((x,), _mean, vectorized=True, seed=3) == (expected.low, expected.high, "percentile")


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.99, 0.999])
def test_confidence_levels_match_scipy(confidence: float) -> None:
    x = np.random.default_rng(11).gamma(2.0, size=120)
    _assert_same_interval((x,), _mean, vectorized=True, confidence=confidence, seed=2)
    y = np.random.default_rng(12).gamma(2.0, size=3000)
    _assert_same_interval((y,), _mean, vectorized=True, confidence=confidence, seed=2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_and_heavily_skewed_data_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    binary = (rng.random(200) < 0.9).astype(float)
    skewed = rng.lognormal(sigma=3.0, size=300)
    _assert_same_interval((binary,), _mean, vectorized=True, seed=seed)
    _assert_same_interval((skewed,), _mean, vectorized=True, seed=seed, resamples=999)


def test_near_constant_data_matches_scipy() -> None:
    x = np.zeros(60)
    x[17] = 1.0  # one non-zero value: most resamples equal the sample's own mean or lie on one side of it
    _assert_same_interval((x,), _mean, vectorized=True, seed=4)


def test_paired_non_vectorized_correlation_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    judge = rng.normal(size=40)
    human = judge + rng.normal(scale=0.8, size=40)
    options: dict[str, Any] = {"vectorized": False, "paired": True, "resamples": 500, "seed": 1}
    _assert_same_interval((judge, human), _corrcoef, **options)


def test_paired_calibration_statistics_match_scipy() -> None:
    rng = np.random.default_rng(6)
    judge = rng.integers(1, 6, size=50).astype(float)
    human = np.clip(judge + rng.integers(-1, 2, size=50), 1, 5)
    for statistic in (_pearson, _spearman):
        _assert_same_interval((judge, human), statistic, vectorized=True, paired=True, resamples=800, seed=2)
    _assert_same_interval((judge, human), _kendall, vectorized=False, paired=True, resamples=300, seed=2)


def test_unpaired_two_sample_statistics_match_scipy() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=30), rng.normal(loc=0.5, size=45)  # different lengths: each is resampled on its own
    _assert_same_interval((a, b), _mean_difference, vectorized=True, seed=3)
    _assert_same_interval((a[:12], b[:15]), _median_difference, vectorized=False, resamples=400, seed=3)
    large_a, large_b = rng.normal(size=2500), rng.normal(size=2100)
    _assert_same_interval((large_a, large_b), _mean_difference, vectorized=True, seed=3)


def test_resamples_are_scipys_draws() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=70), rng.normal(size=70)
    for data, statistic, paired in (((x,), _mean, False), ((x, y), _pearson, True), ((x, y), _mean_difference, False)):
        ours = bootstrap(
            data, statistic, vectorized=True, paired=paired, confidence=0.95, resamples=1000, batch=7,
            method="bca", rng=np.random.default_rng(5),
        )  # fmt: skip
        theirs = stats.bootstrap(
            data, statistic, n_resamples=1000, batch=7, paired=paired, method="BCa", rng=np.random.default_rng(5)
        )
        np.testing.assert_array_equal(ours.distribution, theirs.bootstrap_distribution)


def test_constant_data_has_no_bca_interval_and_falls_back_to_the_percentile() -> None:
    x = np.full(25, 0.7)
    theirs = _scipy((x,), _mean, vectorized=True)
    assert math.isnan(theirs.confidence_interval.low) and math.isnan(theirs.confidence_interval.high)
    ours = bootstrap(
        (x,), _mean, vectorized=True, paired=False, confidence=0.95, resamples=2000, batch=2000, method="bca",
        rng=np.random.default_rng(0),
    )  # fmt: skip
    assert math.isnan(ours.low) and math.isnan(ours.high)
    low, high, method = bootstrap_ci((x,), _mean, vectorized=True)
    expected = np.percentile(theirs.bootstrap_distribution, [2.5, 97.5])
    assert (low, high, method) == (expected[0], expected[1], "percentile")


def test_statistic_undefined_on_some_resamples_falls_back_to_the_finite_ones() -> None:
    judge = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 1.0])  # many resamples hold only 1s: their Kendall tau is NaN
    human = np.array([1.0, 2.0, 1.0, 3.0, 2.0, 1.0])
    theirs = _scipy((judge, human), _kendall, vectorized=False, paired=True, resamples=300)
    assert math.isnan(theirs.confidence_interval.low)
    dist = theirs.bootstrap_distribution[np.isfinite(theirs.bootstrap_distribution)]
    expected = np.percentile(dist, [2.5, 97.5])
    low, high, method = bootstrap_ci((judge, human), _kendall, vectorized=False, paired=True, resamples=300)
    assert (low, high, method) == (expected[0], expected[1], "percentile")


def test_fewer_than_two_values_give_no_interval_and_bad_samples_are_refused() -> None:
    assert bootstrap_ci((np.array([1.0]),), _mean, vectorized=True) == (None, None, None)
    with pytest.raises(ValueError, match="two or more"):
        bootstrap_ci((np.array([1.0, 2.0]), np.array([3.0])), _mean_difference, vectorized=True)
    with pytest.raises(ValueError, match="same length"):
        bootstrap_ci((np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])), _pearson, vectorized=True, paired=True)


def test_quantile_is_scipys_default_and_numpys_linear() -> None:
    rng = np.random.default_rng(10)
    x = rng.lognormal(size=1999)
    p = np.concatenate([rng.random(50), [0.0, 1.0, 0.025, 0.975]])
    np.testing.assert_array_equal(_quantile(x, p), stats.quantile(x, p))
    np.testing.assert_allclose(_quantile(x, p), np.percentile(x, p * 100), rtol=1e-14)
    nan = _quantile(x, np.array([np.nan, -0.1, 1.1, 0.5]))
    assert np.isnan(nan[:3]).all() and nan[3] == np.median(x)
    assert np.isnan(_quantile(np.array([1.0, np.nan, 2.0]), np.array([0.5]))).all()


def test_normal_cdf_and_quantile_match_scipy_special() -> None:
    from scipy.special import ndtr, ndtri

    xs = [*np.linspace(-12, 12, 481), math.inf, -math.inf]
    for x in xs:
        assert _ndtr(x) == pytest.approx(float(ndtr(x)), rel=1e-13, abs=0)
    for p in [1e-12, 1e-6, 0.001, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999999]:
        assert _ndtri(p) == pytest.approx(float(ndtri(p)), rel=1e-14)
    assert (_ndtri(0.0), _ndtri(1.0)) == (-math.inf, math.inf)
    assert math.isnan(_ndtri(math.nan)) and math.isnan(_ndtr(math.nan))


def test_the_run_summary_and_regression_gate_import_no_scipy() -> None:
    # a run's end reads its judges' calibration state: scipy.stats would add ~60 MB to every run
    code = (
        "import sys, scoregate.analysis.summary, scoregate.app.regression_gate, scoregate.tracks.registry, "
        "scoregate.tracks.extraction.run_summary, scoregate.tracks.tags.run_summary, scoregate.app.run.run_execution, "
        "scoregate.app.run.summary, "
        "scoregate.app.run.judge_gates, scoregate.app.run.flaky_items, scoregate.app.run.slice_gates, "
        "scoregate.app.calibration_runs; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
