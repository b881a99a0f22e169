"""`compare`'s Wilcoxon and t-test p-values without scipy.stats: the same numbers, and scipy.stats left unloaded."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.paired_tests import EXACT_MAX, ttest_rel_p, wilcoxon_pratt_p


def _samples() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    out = []
    for n in (EXACT_MAX + 1, 200, 5_000, 100_000):
        a = rng.integers(1, 6, size=n).astype(float)  # a judge's 1-5: many ties and zero differences
        out.append((f"judge scale, {n}", a, np.clip(a + rng.normal(0.1, 0.8, size=n).round(), 1, 5)))
        x = rng.normal(0.5, 0.2, size=n)  # continuous scores: no ties
        out.append((f"continuous, {n}", x, x + rng.normal(0.01, 0.1, size=n)))
        w = rng.integers(0, 400, size=n).astype(float)  # word counts, every difference but one zero
        v = w.copy()
        v[n // 2] += 3
        out.append((f"one change, {n}", w, v))
    flat = np.zeros(60)
    out.append(("one sign, every |d| tied", flat, flat + 1.0))
    return out


@pytest.mark.parametrize(("name", "a", "b"), _samples(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_p_values_are_scipy_stats_to_rounding(name: str, a: np.ndarray, b: np.ndarray) -> None:
    d = b - a

    assert wilcoxon_pratt_p(d) == pytest.approx(stats.wilcoxon(d, zero_method="pratt").pvalue, rel=1e-12, abs=0)
    if np.std(d) > 0:
        assert ttest_rel_p(b, a) == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12, abs=1e-300)


def test_small_samples_take_scipys_exact_and_permutation_tests() -> None:
    exact = np.array([0.3, -0.1, 0.5, 0.7, -0.2, 0.9, 1.1, 0.4])  # no ties: exact
    tied = np.array([1.0, 1.0, -1.0, 0.0, 2.0, 1.0, 0.0, 2.0])  # ties and zeros: permutation

    for d in (exact, tied):
        assert wilcoxon_pratt_p(d) == stats.wilcoxon(d, zero_method="pratt").pvalue


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
