"""Paired comparison of two runs over the same items, Holm correction across scores, judge win rates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np
from scipy import stats

from scoregate.analysis.stats import mean_ci

Verdict = Literal["better", "worse", "no detectable difference", "non-inferior"]
POWER = 0.8


@dataclass(frozen=True)
class PairedComparison:
    """Candidate `b` against baseline `a` on n aligned items; differences are b − a.

    Undefined statistics are None: CI, tests and sd need n ≥ 2, `cohens_dz` needs spread in the
    differences, `wilcoxon_p` needs at least one non-zero difference. `reason` says why any is None.
    """

    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    wilcoxon_p: float | None
    ttest_p: float | None
    cohens_dz: float | None
    wins: int
    ties: int
    losses: int
    mde: float | None
    verdict: Verdict
    non_inferior: bool | None
    p_adjusted: float | None
    margin: float | None
    higher_is_better: bool
    alpha: float
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


@dataclass(frozen=True)
class WinRate:
    """Pairwise-judge preference for B over A; ties count half. None where there are no outcomes."""

    n: int
    b_wins: int
    a_wins: int
    ties: int
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    sign_test_p: float | None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def _aligned(values: Sequence[float], side: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)  # None becomes NaN and is rejected just below
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"compare_paired: {side}[{bad}] is not a finite number; drop items missing on either side first"
        )
    return arr


def _optional(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    margin: float | None = None,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    resamples: int = 5000,
    seed: int = 0,
) -> PairedComparison:
    """Return the paired comparison of candidate `b` against baseline `a` (same item at the same index).

    - `diff`, its (1 − alpha) bootstrap CI (BCa, resampling pairs) and `cohens_dz` are of b − a.
    - `wilcoxon_p`: two-sided signed-rank test with zero_method="pratt": items whose score did not
      change stay in the ranking (so they count in n) but add to neither rank sum. This is more
      conservative than dropping them, which matters on coarse judge scales with many ties.
    - `wins`/`ties`/`losses` count items where b is better/equal/worse, in the direction
      `higher_is_better` names. `mde` = (z₁₋α/₂ + z₀.₈)·sd(b − a)/√n, the smallest true mean
      difference this n detects with 80% power.

    Verdict, with gain = b − a when higher is better, else a − b, and p = `p_adjusted` when set
    (by `compare_many`) else `wilcoxon_p`:
    - without `margin`: "better" when p < alpha and the CI of gain lies above 0, "worse" when
      p < alpha and it lies below 0, otherwise "no detectable difference";
    - with `margin` (≥ 0, in score units; the largest loss tolerated) a non-inferiority test:
      `non_inferior` is True when the CI's lower bound of gain is > −margin. Verdict "better" when it
      is also superior as above, "non-inferior" when it is not, and "worse" when non-inferiority
      could not be shown (this includes n < 2). A gate should read `non_inferior`.
    """
    if margin is not None and not margin >= 0:
        raise ValueError(f"compare_paired: margin must be ≥ 0 (the largest tolerated loss), got {margin}")
    x, y = _aligned(a, "a"), _aligned(b, "b")
    if x.size != y.size:
        raise ValueError(f"compare_paired: a has {x.size} values and b has {y.size}; pairs must be aligned")
    n = int(x.size)
    d = y - x
    gain = d if higher_is_better else -d
    wins, losses = int(np.sum(gain > 0)), int(np.sum(gain < 0))
    low = high = wilcoxon_p = ttest_p = cohens_dz = mde = None
    reason = None
    if n < 2:
        reason = f"{n} paired item{'s' if n != 1 else ''}: at least 2 are needed to compare"
    else:
        low, high, _ = mean_ci(d, confidence=1 - alpha, resamples=resamples, seed=seed)
        sd = float(np.std(d, ddof=1))
        if np.any(d != 0):
            wilcoxon_p = _optional(stats.wilcoxon(d, zero_method="pratt", alternative="two-sided").pvalue)
        if sd > 0:
            ttest_p = _optional(stats.ttest_rel(y, x).pvalue)
            cohens_dz = float(np.mean(d)) / sd
        if not np.any(d != 0):
            reason = "every paired difference is 0: wilcoxon_p, p_adjusted, ttest_p and cohens_dz are undefined"
        elif sd == 0:
            reason = f"every paired difference is {float(d[0]):g} (no spread): ttest_p and cohens_dz are undefined"
        z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(POWER)
        mde = float(z * sd / math.sqrt(n))
    result = PairedComparison(
        n=n,
        mean_a=float(np.mean(x)) if n else None,
        mean_b=float(np.mean(y)) if n else None,
        diff=float(np.mean(d)) if n else None,
        diff_ci_low=low,
        diff_ci_high=high,
        wilcoxon_p=wilcoxon_p,
        ttest_p=ttest_p,
        cohens_dz=cohens_dz,
        wins=wins,
        ties=n - wins - losses,
        losses=losses,
        mde=mde,
        verdict="no detectable difference",
        non_inferior=None,
        p_adjusted=None,
        margin=margin,
        higher_is_better=higher_is_better,
        alpha=alpha,
        reason=reason,
    )
    return _decided(result)


def _decided(r: PairedComparison) -> PairedComparison:
    """Return `r` with `verdict` and `non_inferior` derived from its CI, p-values, margin and alpha."""
    p = r.p_adjusted if r.p_adjusted is not None else r.wilcoxon_p
    gain_low: float | None = None
    gain_high: float | None = None
    if r.diff_ci_low is not None and r.diff_ci_high is not None:
        if r.higher_is_better:
            gain_low, gain_high = r.diff_ci_low, r.diff_ci_high
        else:
            gain_low, gain_high = -r.diff_ci_high, -r.diff_ci_low
    significant = p is not None and p < r.alpha
    superior = significant and gain_low is not None and gain_low > 0
    inferior = significant and gain_high is not None and gain_high < 0
    verdict: Verdict
    non_inferior: bool | None = None
    if r.margin is not None:
        non_inferior = gain_low is not None and gain_low > -r.margin
        verdict = "better" if superior else "non-inferior" if non_inferior else "worse"
    else:
        verdict = "better" if superior else "worse" if inferior else "no detectable difference"
    return replace(r, verdict=verdict, non_inferior=non_inferior)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Return Holm-Bonferroni adjusted p-values in input order; None stays None and is not counted."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(present)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def compare_many(
    pairs: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    margins: Mapping[str, float] | None = None,
    higher_is_better: bool | Mapping[str, bool] = True,
    alpha: float = 0.05,
    resamples: int = 5000,
    seed: int = 0,
) -> dict[str, PairedComparison]:
    """Return `compare_paired` for each score name → (a, b), with Holm applied across the scores.

    Holm adjusts the Wilcoxon p-values (the test that needs no normality; scores are often
    bounded and ordinal), and `p_adjusted` replaces them in the better/worse verdicts. The
    non-inferiority bounds (scores named in `margins`) are not adjusted: a gate that requires every
    score to be non-inferior is an intersection-union test, whose error rate needs no correction.
    `higher_is_better` is one flag for all scores or a flag per score name (missing names: True).
    """
    margins = margins or {}
    unknown = sorted(set(margins) - set(pairs))
    if unknown:
        raise ValueError(f"compare_many: margins name scores that are not compared: {', '.join(unknown)}")
    results = {}
    for name, (a, b) in pairs.items():
        hib = higher_is_better if isinstance(higher_is_better, bool) else higher_is_better.get(name, True)
        results[name] = compare_paired(
            a, b, margin=margins.get(name), higher_is_better=hib, alpha=alpha, resamples=resamples, seed=seed
        )
    names = list(results)
    adjusted = holm([results[name].wilcoxon_p for name in names])
    return {name: _decided(replace(results[name], p_adjusted=p)) for name, p in zip(names, adjusted, strict=True)}


def _wilson(successes: float, n: int, confidence: float) -> tuple[float, float]:
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def preference_win_rate(outcomes: Sequence[str], *, confidence: float = 0.95) -> WinRate:
    """Return B's win rate over A from pairwise-judge outcomes "A", "B" or "tie" (ties count half).

    The CI is Wilson's score interval on (B wins + ties/2) out of n: exact coverage without ties,
    conservative with them (a tie varies less than a coin flip). `sign_test_p` is the two-sided
    binomial test of B wins against A wins, ties left out; None when every outcome is a tie.
    """
    allowed = ("A", "B", "tie")
    for i, outcome in enumerate(outcomes):
        if outcome not in allowed:
            raise ValueError(f"preference_win_rate: outcome #{i} is {outcome!r}; expected one of {allowed}")
    n = len(outcomes)
    b_wins, a_wins = outcomes.count("B"), outcomes.count("A")
    ties = n - b_wins - a_wins
    if n == 0:
        return WinRate(0, 0, 0, 0, None, None, None, None)
    successes = b_wins + ties / 2
    low, high = _wilson(successes, n, confidence)
    decisive = a_wins + b_wins
    sign_p = float(stats.binomtest(b_wins, decisive, 0.5).pvalue) if decisive else None
    return WinRate(n, b_wins, a_wins, ties, successes / n, low, high, sign_p)
