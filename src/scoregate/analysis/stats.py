"""Descriptive statistics of one score over a run: coverage, centre, spread and a bootstrap CI of the mean."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from scoregate.analysis.bootstrap import Method, Statistic, bootstrap
from scoregate.analysis.columns import FloatColumn
from scoregate.store.record import ScoreStats

# BCa needs a jackknife over all n leave-one-out samples (O(n²) work); above this the percentile
# interval is used, which at such n differs from BCa by far less than the interval's width.
BCA_MAX_N = 2000
# Upper bound on the elements of one batch of resamples (batch × n); 250k float64 ≈ 2 MB per array.
BATCH_ELEMENTS = 250_000


def measured_values(values: Sequence[float | None], *, what: str = "values") -> np.ndarray:
    """Return the non-None values as a float array; raise ValueError on NaN or infinity."""
    if isinstance(values, FloatColumn):
        kept = values.measured()
    else:
        kept = np.asarray([v for v in values if v is not None], dtype=float)
    if kept.size and not np.all(np.isfinite(kept)):
        bad = int(np.flatnonzero(~np.isfinite(kept))[0])
        raise ValueError(f"{what}: measured value #{bad} is {kept[bad]}; use None for an unmeasured value")
    return kept


def bootstrap_ci(
    data: tuple[np.ndarray, ...],
    statistic: Statistic,
    *,
    vectorized: bool,
    paired: bool = False,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None, str | None]:
    """Return (low, high, method) of a bootstrap CI; (None, None, None) when n < 2.

    `statistic(*samples, axis=-1)` when vectorized, else `statistic(*samples)`. BCa for n ≤ 2000,
    percentile above; resamples are drawn in batches so memory stays near 2 MB per array whatever n.
    A degenerate distribution (constant data) gives the interval (v, v) rather than NaN.
    """
    n = len(data[0])
    if n < 2:
        return None, None, None
    method: Method = "bca" if n <= BCA_MAX_N else "percentile"
    batch = max(1, min(resamples, BATCH_ELEMENTS // n))
    with warnings.catch_warnings():
        # A statistic undefined on some resamples (a constant resample's correlation) warns; handled below.
        warnings.simplefilter("ignore")
        result = bootstrap(
            data,
            statistic,
            vectorized=vectorized,
            paired=paired,
            confidence=confidence,
            resamples=resamples,
            batch=batch,
            method=method,
            rng=np.random.default_rng(seed),
        )
    if math.isfinite(result.low) and math.isfinite(result.high):
        return result.low, result.high, method
    # BCa fails when the bootstrap distribution is degenerate or a statistic was undefined on
    # some resamples; fall back to the percentile interval of the resamples where it was defined.
    dist = result.distribution.astype(float)
    dist = dist[np.isfinite(dist)]
    if dist.size == 0:
        return None, None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(dist, [tail, 100 - tail])
    return float(low), float(high), "percentile"


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def mean_ci(
    values: np.ndarray, *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float | None, float | None, str | None]:
    """Return (low, high, method) of the bootstrap CI of the mean of finite `values`."""
    if values.size >= 2 and np.all(values == values[0]):
        m = float(np.mean(values))
        return m, m, "constant"
    return bootstrap_ci((values,), _mean, vectorized=True, confidence=confidence, resamples=resamples, seed=seed)


def describe(
    values: Sequence[float | None],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> ScoreStats:
    """Return coverage, mean, median, sample std, bootstrap CI of the mean, min and max of `values`.

    None is an unmeasured value: it lowers coverage and is left out of every statistic.
    """
    x = measured_values(values)
    n_total, n = len(values), int(x.size)
    coverage = n / n_total if n_total else None
    if n == 0:
        return ScoreStats(
            n_total=n_total,
            n_measured=0,
            coverage=coverage,
            mean=None,
            median=None,
            std=None,
            ci_low=None,
            ci_high=None,
            min=None,
            max=None,
            confidence=confidence,
            ci_method=None,
        )
    low, high, method = mean_ci(x, confidence=confidence, resamples=resamples, seed=seed)
    return ScoreStats(
        n_total=n_total,
        n_measured=n,
        coverage=coverage,
        mean=float(np.mean(x)),
        median=float(np.median(x)),
        std=float(np.std(x, ddof=1)) if n >= 2 else None,
        ci_low=low,
        ci_high=high,
        min=float(np.min(x)),
        max=float(np.max(x)),
        confidence=confidence,
        ci_method=method,
    )


def percentiles(values: Sequence[float | None], qs: Sequence[float] = (50, 95, 99)) -> dict[str, float | None]:
    """Return the measured values' percentiles keyed "p50", "p95", …; None for each when none is measured."""
    x = measured_values(values)
    keys = [f"p{q:g}" for q in qs]
    if x.size == 0:
        return dict.fromkeys(keys)
    return {key: float(v) for key, v in zip(keys, np.percentile(x, list(qs)), strict=True)}
