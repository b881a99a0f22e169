"""`compare`'s Wilcoxon and t-test without scipy.stats: scipy.stats' statistics and p-values, and scipy.stats left
unloaded.

Every case is checked against scipy.stats itself (installed: a dependency of scoregate), over random inputs of
every shape a run's scores take (continuous, a judge's 1-5 with many ties and zeros, counts with one change, every
|d| tied, a single sign) and sizes from 2 to 100,000, to 1e-12 relative.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.paired_tests import EXACT_MAX, ttest_rel, wilcoxon_normal, wilcoxon_pratt

REL = 1e-12
SIZES = (2, 3, 4, 5, 8, 13, 14, 20, 49, EXACT_MAX, EXACT_MAX + 1, 52, 75, 120, 400, 2_000)
SEEDS = range(6)
Pairs = tuple[np.ndarray, np.ndarray]


def _continuous(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.normal(0.5, 0.2, size=n)
    return a, a + rng.normal(rng.normal(0, 0.05), 0.1, size=n)


def _judge(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.integers(1, 6, size=n).astype(float)  # 1-5: ties everywhere, many zero differences
    return a, np.clip(a + rng.normal(0.1, 0.8, size=n).round(), 1, 5)


def _one_change(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.integers(0, 400, size=n).astype(float)  # word counts: every difference but one is zero
    b = a.copy()
    b[rng.integers(n)] += rng.choice([-3.0, 3.0])
    return a, b


def _tied_magnitudes(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.normal(size=n)  # every |d| the same, signs mixed (at least one of each when n > 1)
    signs = rng.choice([-1.0, 1.0], size=n)
    signs[0] = 1.0
    signs[-1] = -1.0 if n > 1 else 1.0
    return a, a + 0.25 * signs


def _one_sign(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.uniform(0, 1, size=n)  # every difference positive: the smallest p-values
    return a, a + rng.uniform(0.5, 1.5, size=n)


def _passes_and_zeros(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.integers(0, 2, size=n).astype(float)  # pass/fail: d is -1, 0 or 1
    return a, rng.integers(0, 2, size=n).astype(float)


def _wide(rng: np.random.Generator, n: int) -> Pairs:
    a = rng.lognormal(8, 2, size=n)  # latencies in ms: a long tail, magnitudes far apart
    return a, a * rng.lognormal(0.05, 0.3, size=n)


KINDS: dict[str, Callable[[np.random.Generator, int], Pairs]] = {
    "continuous": _continuous,
    "judge 1-5": _judge,
    "one change": _one_change,
    "every |d| tied": _tied_magnitudes,
    "one sign": _one_sign,
    "pass/fail": _passes_and_zeros,
    "latencies": _wide,
}


def _cases(kind: str, *, permutation_seeds: int = len(SEEDS)) -> list[tuple[str, np.ndarray, np.ndarray]]:
    out = []
    for n in SIZES:
        for seed in SEEDS if n > 13 else SEEDS[:permutation_seeds]:
            a, b = KINDS[kind](np.random.default_rng([seed, n, len(kind)]), n)
            out.append((f"{kind}, n={n}, seed={seed}", a, b))
    return out


def _same(ours: float, theirs: float, what: str) -> None:
    assert ours == pytest.approx(float(theirs), rel=REL, abs=0, nan_ok=True), what


@pytest.mark.parametrize("kind", KINDS)
def test_the_signed_rank_normal_approximation_is_scipys_at_every_size(kind: str) -> None:
    checked = 0
    for name, a, b in _cases(kind):
        d = b - a
        if not np.any(d != 0):
            continue
        theirs = stats.wilcoxon(d, zero_method="pratt", method="asymptotic")
        ours = wilcoxon_normal(d)
        _same(ours.statistic, theirs.statistic, f"{name}: statistic")
        _same(ours.zstatistic, theirs.zstatistic, f"{name}: z")
        _same(ours.pvalue, theirs.pvalue, f"{name}: p-value")
        checked += 1

    assert checked >= len(SIZES) * len(SEEDS) * 0.9


@pytest.mark.scale
@pytest.mark.parametrize("kind", KINDS)
def test_the_signed_rank_test_compare_shows_is_scipys(kind: str) -> None:
    for name, a, b in _cases(kind, permutation_seeds=1):  # scipy's permutation test (n <= 13, ties) is slow
        d = b - a
        if not np.any(d != 0):  # compare shows no Wilcoxon p-value then (scipy's is nan)
            continue
        theirs = stats.wilcoxon(d, zero_method="pratt")  # method "auto": exact, permutation or normal by size
        ours = wilcoxon_pratt(d)
        _same(ours.statistic, theirs.statistic, f"{name}: statistic")
        _same(ours.pvalue, theirs.pvalue, f"{name}: p-value")


@pytest.mark.parametrize("kind", KINDS)
def test_the_paired_t_test_is_scipys_at_every_size(kind: str) -> None:
    for name, a, b in _cases(kind):
        theirs = stats.ttest_rel(b, a)
        ours = ttest_rel(b, a)
        _same(ours.statistic, theirs.statistic, f"{name}: t")
        _same(ours.pvalue, theirs.pvalue, f"{name}: p-value")


def test_no_spread_and_no_difference_give_scipys_infinities_and_nans() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in (a + 1.0, a.copy()):  # every d 1 (t infinite, p 0), every d 0 (t and p nan)
            theirs = stats.ttest_rel(b, a)
            _same(ttest_rel(b, a).statistic, theirs.statistic, f"d={b - a}: t")
            _same(ttest_rel(b, a).pvalue, theirs.pvalue, f"d={b - a}: p-value")
    zeros = np.zeros(EXACT_MAX + 10)
    with np.errstate(divide="ignore", invalid="ignore"):
        theirs = stats.wilcoxon(zeros, zero_method="pratt")
    assert np.isnan(theirs.pvalue) and np.isnan(wilcoxon_pratt(zeros).pvalue)


@pytest.mark.parametrize("n", [EXACT_MAX + 1, 5_000, 100_000])
def test_the_p_values_of_large_runs_are_scipys(n: int) -> None:
    rng = np.random.default_rng(n)
    for kind, make in KINDS.items():
        a, b = make(rng, n)
        d = b - a
        _same(wilcoxon_pratt(d).pvalue, stats.wilcoxon(d, zero_method="pratt").pvalue, f"{kind}, n={n}: Wilcoxon")
        _same(ttest_rel(b, a).pvalue, stats.ttest_rel(b, a).pvalue, f"{kind}, n={n}: t-test")


COMPARE_200 = """
import sys
import numpy as np
from scoregate.analysis.paired import compare_paired
rng = np.random.default_rng(1)
a = rng.integers(1, 6, size=200).astype(float)
result = compare_paired(list(a), list(np.clip(a + 1, 1, 5)), resamples=200)
print(result.wilcoxon_p is not None and result.ttest_p is not None and result.mde is not None)
print("scipy.stats" in sys.modules)
"""


def test_comparing_more_than_fifty_items_does_not_import_scipy_stats() -> None:
    shown = subprocess.run([sys.executable, "-c", COMPARE_200], capture_output=True, text=True, check=True)

    # scipy.stats costs ~45 MB beside MLflow's modules: a compare of 100,000 items must stay under 250 MB
    assert shown.stdout.split() == ["True", "False"], shown.stderr[-2000:]
