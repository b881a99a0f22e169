"""Paired comparisons of two runs, Holm correction across scores, pairwise-judge win rates."""

from __future__ import annotations

import math
import statistics
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.paired import (
    compare_many,
    compare_paired,
    holm,
    holm_intervals,
    interval_verdict,
    preference_win_rate,
)


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
    down = compare_paired(a, b, direction="lower", resamples=500)
    assert down.verdict == "worse"
    assert (down.wins, down.losses) == (up.losses, up.wins)
    assert down.diff == up.diff


def test_identical_runs_say_no_change_and_claim_no_detectable_effect() -> None:
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    result = compare_paired(a, a)
    assert (result.wilcoxon_p, result.ttest_p, result.cohens_dz) == (None, None, None)
    assert (result.diff, result.diff_ci_low, result.diff_ci_high) == (0.0, 0.0, 0.0)
    # no change, not "inconclusive"; and no MDE: an MDE of 0 would claim 5 items detect any difference
    assert (result.ties, result.mde, result.verdict) == (5, None, "no change")
    assert result.reason is not None and "mde" in result.reason
    with_margin = compare_paired(a, a, margin=0.1)
    assert (with_margin.verdict, with_margin.non_inferior) == ("no change", True)
    assert compare_paired(a, a, direction="none").verdict == "no change"
    assert compare_paired([1.0], [1.0]).verdict == "cannot compare"  # one item: no interval to read a word from


def test_differences_without_spread_have_no_mde() -> None:
    result = compare_paired([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert (result.verdict, result.mde, result.cohens_dz) == ("better", None, None)


def test_noise_alone_is_inconclusive() -> None:
    a, b = _runs(60, shift=0.0, seed=4)
    result = compare_paired(a, b, resamples=500)
    assert result.verdict == "inconclusive"
    assert result.diff_ci_low < 0 < result.diff_ci_high  # type: ignore[operator]


def test_mde_shrinks_with_more_items() -> None:
    small = compare_paired(*_runs(25, shift=0.0, seed=1), resamples=200)
    large = compare_paired(*_runs(400, shift=0.0, seed=1), resamples=200)
    assert large.mde < small.mde  # type: ignore[operator]


def test_non_inferiority_within_margin_and_outside_it() -> None:
    a, b = _pattern(ups=3, downs=5)  # slightly worse: mean diff −0.067
    loose = compare_paired(a, b, margin=0.5, resamples=1000)
    assert (loose.verdict, loose.non_inferior) == ("equivalent", True)  # the CI lies within ±0.5
    edge = compare_paired(a, [x + 0.15 for x in b], margin=0.2, resamples=1000)  # CI reaches above +0.2
    assert (edge.verdict, edge.non_inferior) == ("non-inferior", True)
    assert loose.diff_ci_low > -0.5  # type: ignore[operator]
    tight = compare_paired(a, b, margin=0.05, resamples=1000)
    assert (tight.verdict, tight.non_inferior) == ("inconclusive", False)


def test_non_inferiority_margin_applies_in_the_better_direction() -> None:
    a, b = _pattern(ups=5, downs=3)  # b higher; with lower-is-better that is a small loss
    result = compare_paired(a, b, margin=0.5, direction="lower", resamples=1000)
    assert (result.verdict, result.non_inferior) == ("equivalent", True)
    assert compare_paired(a, b, margin=0.05, direction="lower", resamples=1000).non_inferior is False


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
    assert (empty.mean_a, empty.diff, empty.verdict, empty.non_inferior) == (None, None, "cannot compare", False)
    assert one.verdict == "cannot compare"  # no test was made, so none was inconclusive


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


def test_secondary_scores_get_holm_adjusted_p_values_and_wider_intervals() -> None:
    pairs = {"accuracy": _pattern(ups=7, downs=1), "helpfulness": _pattern(ups=9, downs=2)}
    alone = {name: compare_paired(a, b, resamples=500) for name, (a, b) in pairs.items()}
    together = compare_many(pairs, primary=[], resamples=500)
    expected = holm([alone["accuracy"].wilcoxon_p, alone["helpfulness"].wilcoxon_p])
    assert [together[name].p_adjusted for name in pairs] == expected
    assert max(r.ci_level for r in together.values()) == pytest.approx(0.975)  # step 1 of 2: 1 − 0.05/2
    for name, r in together.items():
        assert r.role == "secondary"
        assert r.diff_ci_low <= alone[name].diff_ci_low and r.diff_ci_high >= alone[name].diff_ci_high  # type: ignore[operator]
        assert r.verdict == interval_verdict(r.diff_ci_low, r.diff_ci_high)[0]
    primary = compare_many(pairs, primary=["accuracy"], resamples=500)
    assert (primary["accuracy"].role, primary["accuracy"].p_adjusted, primary["accuracy"].ci_level) == (
        "primary", None, 0.95,
    )  # fmt: skip
    assert primary["helpfulness"].ci_level == pytest.approx(0.95)  # the only secondary: Holm over one score
    assert primary["helpfulness"].role == "secondary"


def test_holm_intervals_relax_the_level_only_after_a_rejection() -> None:
    strong, weak = _pattern(ups=20, downs=0), _pattern(ups=4, downs=2)
    pairs = {"weak": weak, "strong": strong, "none": ([1.0, 2.0], [1.0, 2.0])}
    result = compare_many(pairs, primary=[], resamples=500)
    # the family is the 2 scores with a test (as for p_adjusted): strong has the smaller p, step 1 at 1 − 0.05/2,
    # rejected; weak at 1 − 0.05/1; "none" (every difference 0: no test, CI [0, 0]) is outside it at 1 − 0.05
    assert result["strong"].ci_level == pytest.approx(1 - 0.05 / 2)
    assert result["weak"].ci_level == pytest.approx(1 - 0.05)
    assert result["none"].ci_level == pytest.approx(1 - 0.05)
    assert (result["none"].p_adjusted, result["none"].diff_ci_low, result["none"].diff_ci_high) == (None, 0, 0)
    assert result["strong"].p_adjusted == pytest.approx(min(1.0, 2 * (result["strong"].wilcoxon_p or 1)))
    assert (result["strong"].verdict, result["weak"].verdict) == ("better", "inconclusive")
    assert holm_intervals([], 0.05, lambda i, level: compare_paired([1.0], [1.0])) == []


def test_the_issue_case_a_ci_above_zero_is_better_whatever_holm_does_to_the_wilcoxon_p() -> None:
    """Issue 11: Δ +1.06 with a 95% CI above 0, 5 wins / 4 ties / 0 losses, t p ≈ 0.02: it is "better".

    The old rule read the Holm-adjusted Wilcoxon p across 12 scores (5 non-zero pairs: p ≥ 0.0625)
    and said "no detectable difference" beside that interval.
    """
    base = [3.1, 2.9, 3.4, 3.0, 2.8, 3.3, 3.2, 3.0, 3.1]
    gains = [1.6, 2.0, 2.4, 1.7, 1.8, 0, 0, 0, 0]
    pairs = {"WeightedQuality": (base, [a + g for a, g in zip(base, gains, strict=True)])}
    rng = np.random.default_rng(3)
    for k in range(11):  # counters and other judges: noise
        a = list(rng.integers(1, 6, size=9).astype(float))
        pairs[f"score_{k}"] = (a, list(np.clip(np.add(a, rng.integers(-1, 2, size=9)), 1, 5)))
    result = compare_many(pairs, primary=["WeightedQuality"], resamples=2000)
    wq = result["WeightedQuality"]
    assert wq.diff == pytest.approx(sum(gains) / 9)
    assert (wq.wins, wq.ties, wq.losses) == (5, 4, 0)
    assert wq.ttest_p is not None and wq.ttest_p < 0.05
    assert wq.wilcoxon_p is not None and wq.wilcoxon_p >= 0.0625
    assert wq.diff_ci_low is not None and wq.diff_ci_low > 0
    assert wq.verdict == "better"
    assert all(r.role == "secondary" and r.p_adjusted is not None for n, r in result.items() if n != "WeightedQuality")


def _check_agrees(r) -> None:  # type: ignore[no-untyped-def]
    low, high = r.diff_ci_low, r.diff_ci_high
    gain_low, gain_high = (-high, -low) if r.direction == "lower" else (low, high)
    if r.verdict == "better":
        assert r.direction != "none" and gain_low > 0
    elif r.verdict == "worse":
        assert r.direction != "none" and gain_high < 0
    elif r.verdict == "increased":
        assert r.direction == "none" and low > 0
    elif r.verdict == "decreased":
        assert r.direction == "none" and high < 0
    elif r.verdict == "equivalent":
        assert -r.margin < gain_low and gain_high < r.margin and not (gain_low > 0 or gain_high < 0)
    elif r.verdict == "non-inferior":
        assert gain_low > -r.margin and gain_low <= 0 <= gain_high
    elif r.verdict == "no change":
        assert low == high == 0 and r.mde is None
    else:
        assert r.verdict == "inconclusive"
        assert low is None or (gain_low <= 0 <= gain_high)
        if r.margin is not None and low is not None:
            assert gain_low <= -r.margin or (r.direction == "none" and gain_high >= r.margin)
    if r.margin is not None and low is not None:
        assert r.non_inferior == (gain_low > -r.margin)


@pytest.mark.scale
def test_no_verdict_contradicts_its_interval_over_many_random_samples() -> None:
    """Property: over random paired samples, directions, margins and roles, each word matches its printed CI."""
    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(40):
        n = int(rng.integers(2, 40))
        pairs, margins, directions = {}, {}, {}
        for k in range(int(rng.integers(1, 5))):
            a = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n) if rng.random() < 0.5 else rng.normal(0, 1, size=n)
            b = a + rng.normal(float(rng.normal(0, 0.6)), float(rng.uniform(0, 1.5)), size=n).round(
                int(rng.integers(0, 3))
            )
            name = f"s{k}"
            pairs[name] = (list(a), list(b))
            directions[name] = ["higher", "lower", "none"][int(rng.integers(0, 3))]
            if rng.random() < 0.5:
                margins[name] = float(rng.uniform(0, 1))
        primary = [n for n in pairs if rng.random() < 0.5]
        result = compare_many(
            pairs,
            primary=primary,
            margins=margins,
            directions=directions,
            resamples=200,
            seed=trial,  # type: ignore[arg-type]
        )
        for r in result.values():
            _check_agrees(r)
            checked += 1
    assert checked > 60


def test_interval_verdict_reads_the_interval_only() -> None:
    assert interval_verdict(0.1, 0.5) == ("better", None)
    assert interval_verdict(0.1, 0.5, direction="lower") == ("worse", None)
    assert interval_verdict(-0.5, -0.1, direction="lower") == ("better", None)
    assert interval_verdict(0.1, 0.5, direction="none") == ("increased", None)
    assert interval_verdict(-0.1, 0.1, margin=0.2) == ("equivalent", True)
    assert interval_verdict(-0.1, 0.3, margin=0.2) == ("non-inferior", True)
    assert interval_verdict(-0.3, 0.3, margin=0.2) == ("inconclusive", False)
    assert interval_verdict(None, None, margin=0.2) == ("cannot compare", False)
    assert interval_verdict(None, None) == ("cannot compare", None)


def test_compare_many_takes_margins_and_directions_per_score() -> None:
    pairs = {"quality": _pattern(ups=3, downs=5), "latency": _pattern(ups=3, downs=5)}
    result = compare_many(pairs, margins={"quality": 0.5}, directions={"latency": "lower"}, resamples=500)
    assert (result["quality"].verdict, result["quality"].non_inferior) == ("equivalent", True)
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
