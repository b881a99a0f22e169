"""Bootstrap intervals in numpy alone, computed step for step as `scipy.stats.bootstrap` (scipy 1.17) does.

For the same data, statistic, seed, batch size and level the resamples are the same draws and the
interval agrees with scipy's to rounding (~1e-15 relative): only the normal cdf and quantile come from
the standard library instead of scipy.special. Importing scipy.stats costs ~70 MB and ~0.6 s of CPU,
which the run summary must not pay. The samples are 1-D; the statistic reduces the last axis.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

Statistic = Callable[..., Any]
Method = Literal["bca", "percentile"]

_NORMAL = NormalDist()


@dataclass(frozen=True)
class BootstrapResult:
    """The interval (NaN where undefined, as scipy gives it) and the statistic on each resample."""

    low: float
    high: float
    distribution: np.ndarray


def bootstrap(
    data: Sequence[np.ndarray],
    statistic: Statistic,
    *,
    vectorized: bool,
    paired: bool,
    confidence: float,
    resamples: int,
    batch: int,
    method: Method,
    rng: np.random.Generator,
) -> BootstrapResult:
    """Return the two-sided bootstrap interval of `statistic` on `data`, as scipy.stats.bootstrap computes it.

    `statistic(*samples, axis=-1)` when vectorized, else `statistic(*samples)` on one resample at a
    time. `paired` resamples observations (the same indices in every sample). Resamples are drawn
    `batch` at a time, and BCa's jackknife runs `batch` leave-one-out samples at a time.
    """
    if resamples < 1 or batch < 1:
        raise ValueError(f"bootstrap: resamples ({resamples}) and batch ({batch}) must be positive")
    samples = [np.asarray(sample) for sample in data]
    if not samples or any(sample.ndim != 1 or sample.size < 2 for sample in samples):
        raise ValueError("bootstrap: each sample must be 1-D with two or more observations")
    stat = statistic if vectorized else _vectorize(statistic)
    if paired:
        if any(sample.size != samples[0].size for sample in samples):
            raise ValueError("bootstrap: paired samples must have the same length")
        stat, samples = _on_indices(stat, samples), [np.arange(samples[0].size)]
    parts = []
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        drawn = [sample[..., rng.integers(0, sample.shape[-1], (size, sample.shape[-1]))] for sample in samples]
        parts.append(stat(*drawn, axis=-1))
    distribution = np.concatenate(parts, axis=-1)
    alpha = (1 - confidence) / 2
    if method == "bca":
        levels = _bca_levels(samples, stat, alpha, distribution, batch)
    else:
        levels = np.asarray([alpha, 1 - alpha], dtype=float)
    low, high = _quantile(distribution, levels)
    return BootstrapResult(float(low), float(high), distribution)


def _vectorize(statistic: Statistic) -> Statistic:
    """Apply a one-resample statistic along the last axis (scipy's `_vectorize_statistic`)."""

    def stat_nd(*samples: np.ndarray, axis: int = -1) -> Any:
        split = np.cumsum([sample.shape[axis] for sample in samples])[:-1]
        joined = np.moveaxis(np.concatenate(_broadcast_leading(samples), axis=axis), axis, 0)
        return np.apply_along_axis(lambda column: statistic(*np.split(column, split)), 0, joined)[()]

    return stat_nd


def _on_indices(statistic: Statistic, samples: list[np.ndarray]) -> Statistic:
    """Turn a statistic of paired samples into one of observation indices, as scipy resamples pairs."""

    def of_indices(i: np.ndarray, axis: int = -1) -> Any:
        return statistic(*[sample[..., i] for sample in samples], axis=axis)

    return of_indices


def _broadcast_leading(samples: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Broadcast every axis but the last, which keeps each sample's own length."""
    lead = np.broadcast_shapes(*(sample.shape[:-1] for sample in samples))
    return [np.broadcast_to(sample, lead + sample.shape[-1:]) for sample in samples]


def _jackknife(sample: np.ndarray, batch: int) -> Iterator[np.ndarray]:
    """Yield the leave-one-out samples, `batch` rows at a time."""
    n = sample.shape[-1]
    for start in range(0, n, batch):
        size = min(batch, n - start)
        keep = np.ones((size, n), dtype=bool)
        np.fill_diagonal(keep[:, start : start + size], False)
        index = np.broadcast_to(np.arange(n), (size, n))[keep].reshape((size, n - 1))
        yield sample[..., index]


def _bca_levels(
    samples: list[np.ndarray], stat: Statistic, alpha: float, distribution: np.ndarray, batch: int
) -> np.ndarray:
    """Return BCa's adjusted quantile levels (Efron & Tibshirani 14.3, 15.4); NaN where BCa is undefined."""
    theta_hat = np.expand_dims(stat(*samples, axis=-1), axis=-1)
    below = np.count_nonzero(distribution < theta_hat, axis=-1) + np.count_nonzero(distribution <= theta_hat, axis=-1)
    percentile = float(np.asarray(below).astype(theta_hat.dtype) / (2 * distribution.shape[-1]))
    z0 = np.float64(_ndtri(percentile))
    nums, dens = [], []
    for j, sample in enumerate(samples):
        with_axis = [np.expand_dims(s, axis=-2) for s in samples]
        parts = []
        for left_out in _jackknife(sample, batch):
            with_axis[j] = left_out
            parts.append(stat(*_broadcast_leading(with_axis), axis=-1))
        theta_i = np.concatenate(parts, axis=-1)
        n = float(theta_i.shape[-1])
        u = (n - 1) * (np.mean(theta_i, axis=-1, keepdims=True) - theta_i)
        nums.append(np.sum(u**3, axis=-1) / n**3)
        dens.append(np.sum(u**2, axis=-1) / n**2)
    with np.errstate(all="ignore"):  # no spread in the jackknife: a_hat is NaN and so is the interval
        a_hat = 1 / 6 * sum(nums) / sum(dens) ** (3 / 2)
        z_alpha = _ndtri(alpha)
        num1, num2 = z0 + z_alpha, z0 - z_alpha
        levels = [_ndtr(z0 + num1 / (1 - a_hat * num1)), _ndtr(z0 + num2 / (1 - a_hat * num2))]
    return np.asarray(levels, dtype=float)


def _ndtri(p: float) -> float:
    """Standard normal quantile, with scipy.special.ndtri's values at 0, 1 and outside."""
    if 0 < p < 1:
        return _NORMAL.inv_cdf(p)
    return -math.inf if p == 0 else math.inf if p == 1 else math.nan


def _ndtr(x: Any) -> float:
    """Standard normal cdf as scipy.special.ndtr computes it: erfc in the tails keeps their relative precision.

    NormalDist.cdf (0.5·(1 + erf)) underflows to 0 below about −8.3 and loses digits below −2.
    """
    z = float(x) * math.sqrt(0.5)
    if abs(z) < math.sqrt(0.5):
        return 0.5 + 0.5 * math.erf(z)
    tail = 0.5 * math.erfc(abs(z))
    return 1.0 - tail if z > 0 else tail


def _quantile(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Quantiles of 1-D `x` at levels `p` as scipy.stats.quantile's default ('linear', NaN propagates).

    The same values as np.percentile(method='linear') up to rounding; written out so they agree bit for bit.
    """
    y = np.sort(x)
    n = float(y.shape[-1])
    if np.isnan(y).any():
        return np.full(p.shape, np.nan)
    undefined = (p > 1) | (p < 0) | np.isnan(p)
    p = np.where(undefined, 0.5, p)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = np.where(j < 0, 0.0, jg % 1)
    j, jp1 = np.clip(j, 0.0, n - 1), np.clip(jp1, 0.0, n - 1)
    result = (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]
    return np.where(undefined, np.nan, result)
