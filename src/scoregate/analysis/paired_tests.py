"""The paired tests `compare` shows beside its verdict, computed step for step as scipy.stats (1.17) computes them.

`wilcoxon_pratt(d)` is `scipy.stats.wilcoxon(d, zero_method="pratt")` and `ttest_rel(b, a)` is
`scipy.stats.ttest_rel(b, a)` (two-sided; statistic and p-value), without importing scipy.stats: it costs ~45 MB
beside MLflow's modules (~75 MB alone), which a `compare` of 100,000 items mirrored to MLflow cannot afford under
250 MB. The ranks come from numpy, the normal and t distributions from scipy.special (~5 MB beside MLflow). Over 50
differences scipy's signed-rank test is the normal approximation (`wilcoxon_normal`); at 50 or fewer it is exact
(no ties, no zeros), a permutation test (ties or zeros, up to 13) or the normal approximation again, and
scipy.stats itself is called (small samples: its import is the only cost).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

EXACT_MAX = 50
"""Up to this many differences scipy's signed-rank test may be exact (or a permutation test): scipy.stats does it."""


class PairedTest(NamedTuple):
    """A two-sided test's statistic and p-value (nan where scipy's is nan)."""

    statistic: float
    pvalue: float


class SignedRankNormal(NamedTuple):
    """The signed-rank test's normal approximation: min(W+, W−), z (as scipy reports it: −|z|) and the p-value."""

    statistic: float
    zstatistic: float
    pvalue: float


def wilcoxon_pratt(d: np.ndarray) -> PairedTest:
    """The two-sided signed-rank test of differences `d` (1-D, finite), zeros ranked (Pratt), as scipy.stats."""
    if d.size <= EXACT_MAX:
        from scipy import stats

        result = stats.wilcoxon(d, zero_method="pratt", alternative="two-sided")
        return PairedTest(float(result.statistic), float(result.pvalue))
    normal = wilcoxon_normal(d)
    return PairedTest(normal.statistic, normal.pvalue)


def wilcoxon_normal(d: np.ndarray) -> SignedRankNormal:
    """`scipy.stats.wilcoxon(d, zero_method="pratt", method="asymptotic")`: no continuity correction, Cureton's
    adjustment for zeros, ties corrected in the variance."""
    from scipy.special import ndtr

    d = np.asarray(d, dtype=np.float64)
    ranks, ties = _average_ranks(np.abs(d))
    r_plus = float(np.sum((d > 0).astype(np.float64) * ranks))
    r_minus = float(np.sum((d < 0).astype(np.float64) * ranks))
    count = float(d.size)
    n_zero = float(np.count_nonzero(d == 0))
    mean = count * (count + 1.0) * 0.25 - n_zero * (n_zero + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0) - n_zero * (n_zero + 1.0) * (2.0 * n_zero + 1.0)
    if n_zero:  # zeros are the smallest |d|: their tie count comes first, and zeros are not tie-corrected
        ties[0] = 0.0
    se = np.sqrt((var - np.sum(ties**3 - ties) / 2) / 24)
    with np.errstate(divide="ignore", invalid="ignore"):  # every d zero: se is 0 and z nan, as scipy's
        z = np.divide(r_plus - mean, se)
    return SignedRankNormal(min(r_plus, r_minus), float(-np.abs(z)), float(2 * ndtr(-np.abs(z))))


def ttest_rel(b: np.ndarray, a: np.ndarray) -> PairedTest:
    """The two-sided paired t-test of `b` against `a` (the mean of b − a is 0): t and its p-value."""
    from scipy.special import stdtr

    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = d.size
    mean = np.mean(d)
    var = np.mean((d - np.mean(d, keepdims=True)) ** 2) * (n / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean, np.sqrt(var / n))
    return PairedTest(float(t), float(2 * stdtr(float(n - 1), -np.abs(t))))


def _average_ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of `x` (ties get their average rank) and tie counts, as scipy's `_rankdata(x, 'average',
    return_ties=True)`: each group's size at the sorted position where the group starts, 0 elsewhere."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.concatenate([[True], ordered[:-1] != ordered[1:]])
    first = np.flatnonzero(starts)
    counts = np.diff(first, append=x.size)
    ordinal = np.arange(1, x.size + 1, dtype=np.float64)
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = np.repeat(ordinal[starts] + (counts.astype(np.float64) - 1) / 2, counts)
    ties = np.zeros(x.size, dtype=np.float64)
    ties[starts] = counts
    return ranks, ties
