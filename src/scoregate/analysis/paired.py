"""Paired comparison of two runs over the same items: verdicts read from the CI, Holm for secondary scores."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np

from scoregate.analysis.stats import mean_ci
from scoregate.analysis.verdicts import VERDICT_RULE, WILCOXON_VARIANT, Verdict, interval_verdict
from scoregate.catalog.models import Direction

__all__ = [
    "VERDICT_RULE", "WILCOXON_VARIANT", "PairedComparison", "Verdict", "compare_many", "compare_paired", "holm",
    "holm_intervals", "interval_verdict", "preference_win_rate",
]  # fmt: skip

Role = Literal["primary", "secondary"]
POWER = 0.8


@dataclass(frozen=True)
class PairedComparison:
    """Candidate `b` against baseline `a` on n aligned items; differences are b − a.

    Undefined statistics are None: CI, tests and sd need n ≥ 2, `cohens_dz`, `ttest_p` and `mde` need
    spread in the differences, `wilcoxon_p` needs at least one non-zero difference. `reason` says why
    any is None. The verdict follows the printed interval (`diff_ci_low`, `diff_ci_high`, at
    `ci_level`) alone; every difference 0 reads "no change".
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
    direction: Direction
    alpha: float
    ci_level: float
    """Confidence level of the printed CI: 1 − alpha for a primary metric, Holm's step level for a secondary."""
    role: Role = "primary"
    reason: str | None = None

    @property
    def higher_is_better(self) -> bool:
        """True unless lower is better (a score without direction counts as higher for wins/losses)."""
        return self.direction != "lower"

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
    direction: Direction = "higher",
    alpha: float = 0.05,
    ci_level: float | None = None,
    resamples: int = 5000,
    seed: int = 0,
) -> PairedComparison:
    """Return the paired comparison of candidate `b` against baseline `a` (same item at the same index).

    - `diff`, its bootstrap CI (BCa, resampling pairs; level `ci_level`, default 1 − alpha) and
      `cohens_dz` are of b − a; the verdict follows that CI (`interval_verdict`).
    - `wilcoxon_p`: two-sided signed-rank test with zero_method="pratt": items whose score did not
      change stay in the ranking (so they count in n) but add to neither rank sum. This is more
      conservative than dropping them, which matters on coarse judge scales with many ties.
      `ttest_p`: the paired t-test. Both are shown beside the verdict; neither decides it.
    - `wins`/`ties`/`losses` count items where b is better/equal/worse in `direction` (b higher
      counts as a win for a score without direction). `mde` = (z₁₋α/₂ + z₀.₈)·sd(b − a)/√n, the
      smallest true mean difference this n detects with 80% power; None when sd is 0 (no spread to
      size it from: an MDE of 0 would claim any difference is detectable).
    - `margin` (≥ 0, in score units; the largest loss tolerated) adds `non_inferior` and the words
      "equivalent" and "non-inferior"; a gate should read `non_inferior`.
    """
    from scipy.special import ndtri  # not scipy.stats (~45-75 MB): see `paired_tests`

    from scoregate.analysis.paired_tests import ttest_rel, wilcoxon_pratt

    if margin is not None and not margin >= 0:
        raise ValueError(f"compare_paired: margin must be ≥ 0 (the largest tolerated loss), got {margin}")
    level = 1 - alpha if ci_level is None else ci_level
    x, y = _aligned(a, "a"), _aligned(b, "b")
    if x.size != y.size:
        raise ValueError(f"compare_paired: a has {x.size} values and b has {y.size}; pairs must be aligned")
    n = int(x.size)
    d = y - x
    gain = -d if direction == "lower" else d
    wins, losses = int(np.sum(gain > 0)), int(np.sum(gain < 0))
    low = high = wilcoxon_p = ttest_p = cohens_dz = mde = None
    reason = None
    if n < 2:
        reason = f"{n} paired item{'s' if n != 1 else ''}: at least 2 are needed to compare"
    else:
        low, high, _ = mean_ci(d, confidence=level, resamples=resamples, seed=seed)
        sd = float(np.std(d, ddof=1))
        if np.any(d != 0):
            wilcoxon_p = _optional(wilcoxon_pratt(d).pvalue)
        if sd > 0:
            ttest_p = _optional(ttest_rel(y, x).pvalue)
            cohens_dz = float(np.mean(d)) / sd
        if not np.any(d != 0):
            reason = "every paired difference is 0: wilcoxon_p, p_adjusted, ttest_p, cohens_dz and mde are undefined"
        elif sd == 0:
            reason = f"every paired difference is {float(d[0]):g} (no spread): ttest_p, cohens_dz and mde are undefined"
        else:  # with no spread in the differences there is no variance to size a detectable effect from
            z = ndtri(1 - (1 - level) / 2) + ndtri(POWER)  # scipy.stats.norm.ppf
            mde = float(z * sd / math.sqrt(n))
    verdict, non_inferior = interval_verdict(low, high, direction=direction, margin=margin)
    return PairedComparison(
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
        verdict=verdict,
        non_inferior=non_inferior,
        p_adjusted=None,
        margin=margin,
        direction=direction,
        alpha=alpha,
        ci_level=level,
        reason=reason,
    )


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


def _excludes_zero(r: PairedComparison) -> bool:
    return r.diff_ci_low is not None and r.diff_ci_high is not None and (r.diff_ci_low > 0 or r.diff_ci_high < 0)


def holm_intervals(
    pvalues: Sequence[float | None], alpha: float, at_level: Callable[[int, float], PairedComparison]
) -> list[PairedComparison]:
    """Return the comparisons recomputed at Holm step-down CI levels, in input order.

    The family is the hypotheses that have a test (a p-value), the same m that `holm` counts. They are
    taken by increasing p; the k-th (0-based) of m gets the level 1 − alpha/(m − k) while every earlier
    interval excluded 0; from the first one that did not, the level stops relaxing, as Holm stops
    rejecting. So every interval is at least as wide as the (1 − alpha) one, and "better"/"worse" only
    appear where the step-down allows them. A hypothesis without a test (every difference 0, or under 2
    items: its interval is [0, 0] or absent) is outside the family and keeps 1 − alpha.
    `at_level(i, level)` computes hypothesis i at a level.
    """
    family = sorted((i for i, p in enumerate(pvalues) if p is not None), key=lambda i: (pvalues[i], i))
    m = len(family)
    out: dict[int, PairedComparison] = {}
    stepping, level = True, 1 - alpha
    for k, i in enumerate(family):
        if stepping:
            level = 1 - alpha / (m - k)
        out[i] = at_level(i, level)
        stepping = stepping and _excludes_zero(out[i])
    return [out[i] if i in out else at_level(i, 1 - alpha) for i in range(len(pvalues))]


def compare_many(
    pairs: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    primary: Collection[str] | None = None,
    margins: Mapping[str, float] | None = None,
    directions: Direction | Mapping[str, Direction] = "higher",
    alpha: float = 0.05,
    resamples: int = 5000,
    seed: int = 0,
) -> dict[str, PairedComparison]:
    """Return `compare_paired` for each score name → (a, b): primary scores plain, the others Holm-adjusted.

    A `primary` score (chosen before looking: the metrics the gates use, or `--metric`) gets its
    (1 − alpha) CI and a verdict read from it. Every other score is secondary (exploratory): its
    Wilcoxon p-value is Holm-adjusted (`p_adjusted`) and its CI computed at its Holm step-down level
    (`holm_intervals`), so it is wider, and its verdict follows that wider interval. Both use one family:
    the secondary scores that have a Wilcoxon test; one without (every difference 0, or under 2 items)
    has no `p_adjusted` and keeps 1 − alpha, where its interval is [0, 0] or absent. `primary=None` makes every
    score primary. `directions` is one direction for all
    scores or one per score name (missing names: higher).
    """
    margins = margins or {}
    unknown = sorted(set(margins) - set(pairs))
    if unknown:
        raise ValueError(f"compare_many: margins name scores that are not compared: {', '.join(unknown)}")

    def direction_of(name: str) -> Direction:
        return directions if isinstance(directions, str) else directions.get(name, "higher")

    def one(name: str, level: float | None = None) -> PairedComparison:
        a, b = pairs[name]
        return compare_paired(
            a, b, margin=margins.get(name), direction=direction_of(name), alpha=alpha, ci_level=level,
            resamples=resamples, seed=seed,
        )  # fmt: skip

    results = {name: one(name) for name in pairs}
    secondary = [name for name in pairs if primary is not None and name not in primary]
    raw = [results[name].wilcoxon_p for name in secondary]

    def at_level(i: int, level: float) -> PairedComparison:
        name = secondary[i]
        return results[name] if level == results[name].ci_level else one(name, level)

    widened = holm_intervals(raw, alpha, at_level)
    for name, p, result in zip(secondary, holm(raw), widened, strict=True):
        results[name] = replace(result, p_adjusted=p, role="secondary")
    return results


def _wilson(successes: float, n: int, confidence: float) -> tuple[float, float]:
    from scipy import stats

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
    from scipy import stats

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
