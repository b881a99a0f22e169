"""Paired comparisons of two runs, Holm correction across scores, pairwise-judge win rates."""

from __future__ import annotations

import math
import statistics
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.paired import compare_many, compare_paired, holm, preference_win_rate


def _runs(n: int, shift: float, seed: int = 0) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, size=n).astype(float)
    b = np.clip(a + rng.normal(shift, 0.7, size=n).round(), 1, 5)
    return list(a), list(b)


def _pattern(ups: int, downs: int, n: int = 30) -> tuple[list[float], list[float]]:
    """Baseline all zeros; candidate up by 1 on `ups` items, down by 1 on `downs`, equal elsewhere."""
    return [0.0] * n, [1.0] * ups + [-1.0] * downs + [0.0] * (n - ups - downs)


def test_clear_improvement_is_better_with_tests_matching_scipy() -> None:
    a, b = _runs(80, shift=0.8)
    result = compare_paired(a, b, resamples=1000)
    d = np.subtract(b, a)
    assert result.verdict == "better"
    assert result.diff == pytest.approx(d.mean())
    assert 0 < result.diff_ci_low < result.diff < result.diff_ci_high  # type: ignore[operator]
    assert result.wilcoxon_p == pytest.approx(stats.wilcoxon(d, zero_method="pratt").pvalue)
    assert result.ttest_p == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert result.cohens_dz == pytest.approx(d.mean() / statistics.stdev(d))
    assert (result.wins, result.ties, result.losses) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert result.mde == pytest.approx(z * statistics.stdev(d) / math.sqrt(80))


def test_lower_is_better_flips_verdict_and_win_counts() -> None:
    a, b = _runs(80, shift=0.8)
    up = compare_paired(a, b, resamples=500)
    down = compare_paired(a, b, higher_is_better=False, resamples=500)
    assert down.verdict == "worse"
    assert (down.wins, down.losses) == (up.losses, up.wins)
    assert down.diff == up.diff


def test_identical_runs_have_no_tests_and_no_detectable_difference() -> None:
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    result = compare_paired(a, a)
    assert (result.wilcoxon_p, result.ttest_p, result.cohens_dz) == (None, None, None)
    assert (result.diff, result.diff_ci_low, result.diff_ci_high) == (0.0, 0.0, 0.0)
    assert (result.ties, result.mde, result.verdict) == (5, 0.0, "no detectable difference")


def test_noise_alone_is_no_detectable_difference() -> None:
    a, b = _runs(60, shift=0.0, seed=4)
    result = compare_paired(a, b, resamples=500)
    assert result.verdict == "no detectable difference"
    assert result.diff_ci_low < 0 < result.diff_ci_high  # type: ignore[operator]


def test_mde_shrinks_with_more_items() -> None:
    small = compare_paired(*_runs(25, shift=0.0, seed=1), resamples=200)
    large = compare_paired(*_runs(400, shift=0.0, seed=1), resamples=200)
    assert large.mde < small.mde  # type: ignore[operator]


def test_non_inferiority_within_margin_and_outside_it() -> None:
    a, b = _pattern(ups=3, downs=5)  # slightly worse: mean diff −0.067
    loose = compare_paired(a, b, margin=0.5, resamples=1000)
    assert (loose.verdict, loose.non_inferior) == ("non-inferior", True)
    assert loose.diff_ci_low > -0.5  # type: ignore[operator]
    tight = compare_paired(a, b, margin=0.05, resamples=1000)
    assert (tight.verdict, tight.non_inferior) == ("worse", False)


def test_non_inferiority_margin_applies_in_the_better_direction() -> None:
    a, b = _pattern(ups=5, downs=3)  # b higher; with lower-is-better that is a small loss
    result = compare_paired(a, b, margin=0.5, higher_is_better=False, resamples=1000)
    assert (result.verdict, result.non_inferior) == ("non-inferior", True)
    assert compare_paired(a, b, margin=0.05, higher_is_better=False, resamples=1000).verdict == "worse"


def test_superior_candidate_under_a_margin_is_better_and_non_inferior() -> None:
    a, b = _pattern(ups=12, downs=0)
    result = compare_paired(a, b, margin=0.1, resamples=1000)
    assert (result.verdict, result.non_inferior) == ("better", True)
    assert compare_paired(a, b).non_inferior is None


def test_fewer_than_two_pairs_says_why() -> None:
    one = compare_paired([1.0], [2.0])
    assert (one.n, one.diff, one.diff_ci_low, one.wilcoxon_p) == (1, 1.0, None, None)
    assert one.reason is not None and "at least 2" in one.reason
    empty = compare_paired([], [], margin=0.1)
    assert (empty.mean_a, empty.diff, empty.verdict, empty.non_inferior) == (None, None, "worse", False)


def test_misaligned_or_missing_pairs_are_rejected() -> None:
    with pytest.raises(ValueError, match="aligned"):
        compare_paired([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match=r"b\[1\]"):
        compare_paired([1.0, 2.0], [1.0, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="margin"):
        compare_paired([1.0, 2.0], [1.0, 2.0], margin=-1)


def test_holm_worked_example() -> None:
    # sorted: 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 → raised to the running max 0.06.
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([None]) == [None]
    assert holm([]) == []


def test_compare_many_applies_holm_to_the_verdicts() -> None:
    pairs = {"accuracy": _pattern(ups=7, downs=1), "helpfulness": _pattern(ups=9, downs=2)}
    alone = {name: compare_paired(a, b, resamples=500) for name, (a, b) in pairs.items()}
    assert {r.verdict for r in alone.values()} == {"better"}
    together = compare_many(pairs, resamples=500)
    expected = holm([alone["accuracy"].wilcoxon_p, alone["helpfulness"].wilcoxon_p])
    assert [together[name].p_adjusted for name in pairs] == expected
    assert all(p is not None and p >= 0.05 for p in expected)
    assert {r.verdict for r in together.values()} == {"no detectable difference"}


def test_compare_many_takes_margins_and_directions_per_score() -> None:
    pairs = {"quality": _pattern(ups=3, downs=5), "latency": _pattern(ups=3, downs=5)}
    result = compare_many(pairs, margins={"quality": 0.5}, higher_is_better={"latency": False}, resamples=500)
    assert result["quality"].verdict == "non-inferior"
    assert (result["latency"].wins, result["latency"].losses) == (5, 3)
    with pytest.raises(ValueError, match="unknown_score"):
        compare_many(pairs, margins={"unknown_score": 0.1})


def test_win_rate_without_ties_matches_wilson_interval() -> None:
    outcomes = ["B"] * 7 + ["A"] * 3
    result = preference_win_rate(outcomes)
    expected = stats.binomtest(7, 10).proportion_ci(0.95, method="wilson")
    assert (result.n, result.b_wins, result.a_wins, result.ties, result.win_rate) == (10, 7, 3, 0, 0.7)
    assert (result.ci_low, result.ci_high) == pytest.approx((expected.low, expected.high))
    assert result.sign_test_p == pytest.approx(stats.binomtest(7, 10).pvalue)


def test_win_rate_counts_ties_as_half() -> None:
    result = preference_win_rate(["B", "B", "A", "tie", "tie", "tie"])
    assert result.win_rate == pytest.approx(3.5 / 6)
    assert result.ci_low < result.win_rate < result.ci_high  # type: ignore[operator]
    all_ties = preference_win_rate(["tie"] * 4)
    assert (all_ties.win_rate, all_ties.sign_test_p) == (0.5, None)


def test_win_rate_of_nothing_is_none_and_bad_outcomes_are_rejected() -> None:
    assert preference_win_rate([]).win_rate is None
    with pytest.raises(ValueError, match="'b'"):
        preference_win_rate(["A", "b"])
