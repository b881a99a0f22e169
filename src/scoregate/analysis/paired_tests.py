"""The paired tests `compare` shows beside its verdict, computed step for step as scipy.stats (1.17) computes them.

`wilcoxon_p` is `scipy.stats.wilcoxon(d, zero_method="pratt").pvalue` and `ttest_p` is
`scipy.stats.ttest_rel(b, a).pvalue`, without importing scipy.stats: it costs ~45 MB beside MLflow's modules
(~75 MB alone), which a `compare` of 100,000 items mirrored to MLflow cannot afford under 250 MB. The ranks come
from numpy, the normal and t distributions from scipy.special (~5 MB beside MLflow). Over 50 differences
scipy's signed-rank test is the normal approximation done here; at 50 or fewer it is an exact or permutation
test, which scipy.stats itself computes (small samples: its import is the only cost).
"""

from __future__ import annotations

import math

import numpy as np

EXACT_MAX = 50
"""Up to this many differences scipy's signed-rank test is exact (or a permutation test): scipy.stats does it."""


def wilcoxon_pratt_p(d: np.ndarray) -> float:
    """Two-sided p-value of the signed-rank test of differences `d` (1-D, finite), zeros ranked (Pratt)."""
    if d.size <= EXACT_MAX:
        from scipy import stats

        return float(stats.wilcoxon(d, zero_method="pratt", alternative="two-sided").pvalue)
    from scipy.special import ndtr

    d = np.asarray(d, dtype=np.float64)
    ranks, ties = _average_ranks(np.abs(d))
    r_plus = np.sum((d > 0).astype(np.float64) * ranks)
    count = float(d.size)
    n_zero = float(np.count_nonzero(d == 0))
    mean = count * (count + 1.0) * 0.25 - n_zero * (n_zero + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0) - n_zero * (n_zero + 1.0) * (2.0 * n_zero + 1.0)
    if n_zero:  # zeros are the smallest |d|: their tie count comes first, and zeros are not tie-corrected
        ties[0] = 0.0
    se = math.sqrt((var - np.sum(ties**3 - ties) / 2) / 24)
    z = (r_plus - mean) / se
    return float(2 * ndtr(-abs(z)))


def ttest_rel_p(b: np.ndarray, a: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test of `b` against `a` (the mean of b − a is 0)."""
    from scipy.special import stdtr

    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = d.size
    mean = np.mean(d)
    var = np.mean((d - np.mean(d, keepdims=True)) ** 2) * (n / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean, np.sqrt(var / n))
    return float(2 * stdtr(float(n - 1), -np.abs(t)))


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
