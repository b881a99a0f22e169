"""The stop-early statistics: the anytime-valid confidence sequence, the stop rule, the run order.

Exact properties first, then the Monte Carlo check of issue 22 (seeded, 2,000 simulated comparisons per
case, vectorised across simulations): wrong verdicts under no true difference stay within alpha with a
look after every batch, and a 0.5-standard-deviation difference stops a 400-item run before 40% of it.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from scoregate.analysis.sequential import (
    SequenceBounds,
    SequentialInputError,
    confidence_sequence,
    crossings,
    difference_range,
    item_order,
)
from scoregate.analysis.sequential_stop import SequentialMonitor, StopRule, decide, settle_many
from support.paired_scores import PairedShape, binary_shape, judge_shape, judge_with_dz, judge_with_mean

METHODS = ["betting", "empirical-bernstein"]
RUNS, ITEMS, BATCH, ALPHA = 2000, 400, 10, 0.05
LOOKS = list(range(BATCH, ITEMS + 1, BATCH))


def _judge_differences(seed: int, n: int, tilt: float = 0.0) -> np.ndarray:
    return judge_shape(tilt).sample(np.random.default_rng(seed), 1, n)[0]


# --- the confidence sequence -------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_bounds_never_widen_and_close_in_as_items_come(method: str) -> None:
    d = _judge_differences(1, 1000, tilt=0.3)
    cs = confidence_sequence(d, lo=-4, hi=4, method=method, looks=range(10, 1001, 10))
    lower, upper = np.array(cs.lower), np.array(cs.upper)
    assert np.all(np.diff(lower) >= 0) and np.all(np.diff(upper) <= 0)
    assert np.all(lower <= upper)
    width = upper - lower
    assert width[0] > 2.5 and width[-1] < 0.5, (width[0], width[-1])


@pytest.mark.parametrize("method", METHODS)
def test_the_sequence_holds_the_true_mean_at_every_look(method: str) -> None:
    shape = judge_with_mean(0.3)
    d = shape.sample(np.random.default_rng(3), 1, 3000)[0]
    cs = confidence_sequence(d, lo=-4, hi=4, method=method, looks=[1, 2, 3, *range(10, 3001, 10)])
    assert all(lo < shape.mean < hi for lo, hi in zip(cs.lower, cs.upper, strict=True))
    assert cs.upper[-1] - cs.lower[-1] < 0.4
    assert cs.mean == pytest.approx(float(d.mean()))


@pytest.mark.parametrize("method", METHODS)
def test_mirrored_differences_give_the_mirrored_sequence(method: str) -> None:
    d = _judge_differences(4, 300, tilt=0.5)
    looks = range(20, 301, 20)
    cs = confidence_sequence(d, lo=-4, hi=4, method=method, looks=looks)
    mirrored = confidence_sequence(-d, lo=-4, hi=4, method=method, looks=looks)
    assert np.allclose(mirrored.lower, -np.array(cs.upper), atol=1e-9)
    assert np.allclose(mirrored.upper, -np.array(cs.lower), atol=1e-9)
    shifted = confidence_sequence(d + 10, lo=6, hi=14, method=method, looks=looks)  # only the range's place moved
    assert np.allclose(shifted.lower, np.array(cs.lower) + 10, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_a_constant_sequence_closes_in_on_its_value(method: str) -> None:
    zeros = confidence_sequence(np.zeros(1000), lo=-4, hi=4, method=method, looks=[10, 100, 1000])
    assert -0.1 < zeros.lower[-1] < 0 < zeros.upper[-1] < 0.1
    at_top = confidence_sequence(np.full(1000, 4.0), lo=-4, hi=4, method=method, looks=[10, 100, 1000])
    assert at_top.upper[-1] == 4.0 and 3.9 < at_top.lower[-1] < 4.0


@pytest.mark.parametrize("method", METHODS)
def test_one_item_gives_a_valid_uninformative_interval(method: str) -> None:
    cs = confidence_sequence([4.0], lo=-4, hi=4, method=method)
    assert cs.n == 1 and cs.looks == (1,)
    assert -4 <= cs.lower[0] <= 4 == cs.upper[0]
    rule = StopRule(lo=-4, hi=4, method=method)
    assert not decide(cs, rule, total=400).settled


def test_a_degenerate_range_is_a_point() -> None:
    cs = confidence_sequence([0.0, 0.0, 0.0], lo=0, hi=0)
    assert cs.lower == cs.upper == (0.0, 0.0, 0.0)
    assert decide(cs, StopRule(lo=0, hi=0), total=3).stop_reason == "all items"
    assert decide(cs, StopRule(lo=0, hi=0, question="non-inferior", margin=0.5), total=9).verdict == "non-inferior"
    assert difference_range(3, 3) == (0, 0) and difference_range(1, 5) == (-4, 4)


def _hedged_by_brute_force(x: np.ndarray, alpha: float) -> tuple[float, float]:
    """The hedged capital process evaluated item by item on a fine grid of m (scaled to [0, 1])."""
    c, grid, kept = 0.5, np.linspace(0, 1, 4001), []
    for m in grid:
        k_up = k_down = 1.0
        mean, var = 0.5, 0.25
        total = sq = 0.0
        for t, xi in enumerate(x, start=1):
            bet = math.sqrt(2 * math.log(2 / alpha) / (var * t * math.log(1 + t)))
            k_up *= 1 + min(bet, c / m if m > 0 else math.inf) * (xi - m)
            k_down *= 1 - min(bet, c / (1 - m) if m < 1 else math.inf) * (xi - m)
            total += xi
            mean = (0.5 + total) / (t + 1)
            sq += (xi - mean) ** 2
            var = (0.25 + sq) / (t + 1)
        if max(k_up, k_down) / 2 < 1 / alpha:
            kept.append(m)
    return min(kept), max(kept)


def _eb_by_loop(x: np.ndarray, alpha: float) -> tuple[float, float]:
    """Theorem 2's closed form, written out item by item."""
    mean, var, total, sq = 0.5, 0.25, 0.0, 0.0
    num = den = penalty = 0.0
    for t, xi in enumerate(x, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (var * t * math.log(1 + t))), 0.5)
        penalty += 4 * (xi - mean) ** 2 * (-math.log(1 - lam) - lam) / 4
        num, den = num + lam * xi, den + lam
        total += xi
        mean = (0.5 + total) / (t + 1)
        sq += (xi - mean) ** 2
        var = (0.25 + sq) / (t + 1)
    radius = (math.log(2 / alpha) + penalty) / den
    return max(num / den - radius, 0.0), min(num / den + radius, 1.0)


def test_betting_bounds_match_the_capital_process_computed_by_hand() -> None:
    d = _judge_differences(5, 40, tilt=0.8)
    cs = confidence_sequence(d, lo=-4, hi=4, alpha=0.1, looks=[40])
    low, high = (-4 + 8 * b for b in _hedged_by_brute_force((d + 4) / 8, 0.1))
    step = 8 / 4000
    assert low - step <= cs.lower[0] <= low and high <= cs.upper[0] <= high + step


def test_empirical_bernstein_matches_theorem_2_written_out() -> None:
    d = _judge_differences(6, 60, tilt=0.4)
    cs = confidence_sequence(d, lo=-4, hi=4, alpha=0.05, method="empirical-bernstein", looks=[60])
    low, high = _eb_by_loop((d + 4) / 8, 0.05)
    assert cs.lower[0] == pytest.approx(-4 + 8 * low, abs=1e-12)
    assert cs.upper[0] == pytest.approx(-4 + 8 * high, abs=1e-12)


@pytest.mark.scale
def test_the_closed_form_handles_100000_items_well_under_a_second() -> None:
    d = np.random.default_rng(8).uniform(-1, 1, 100_000)
    start = time.perf_counter()
    cs = confidence_sequence(d, lo=-4, hi=4, method="empirical-bernstein")
    elapsed = time.perf_counter() - start
    assert len(cs.lower) == 100_000 and cs.lower[-1] < 0 < cs.upper[-1] < 0.02
    assert elapsed < 1.0, f"{elapsed:.2f}s"


# --- the stop rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_the_monitor_fed_batches_equals_the_sequence_at_batch_ends(method: str) -> None:
    d = _judge_differences(9, 200, tilt=0.6)
    rule = StopRule(lo=-4, hi=4, method=method)
    monitor = SequentialMonitor(rule, total=200)
    for start in range(0, 200, 25):
        decision = monitor.add(d[start : start + 25])
    cs = confidence_sequence(d, lo=-4, hi=4, method=method, looks=range(25, 201, 25))
    assert monitor.bounds().looks == cs.looks
    assert np.allclose(monitor.bounds().lower, cs.lower, atol=1e-9)
    assert np.allclose(monitor.bounds().upper, cs.upper, atol=1e-9)
    assert decision.n == 200 and decision.lower == pytest.approx(cs.lower[-1], abs=1e-9)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("question", ["better", "non-inferior"])
def test_simulated_stops_are_the_monitors_own_decisions(method: str, question: str) -> None:
    rng = np.random.default_rng(10)
    rule = StopRule(lo=-4, hi=4, method=method, question=question, margin=0.3 if question == "non-inferior" else 0)
    tilts = rng.choice([-0.8, -0.2, 0.0, 0.2, 0.8], size=60)
    d = np.vstack([judge_shape(t).sample(rng, 1, 200)[0] for t in tilts])
    many = settle_many(d, rule, looks=range(20, 201, 20))
    for row, n, verdict in zip(d, many.n, many.verdict, strict=True):
        monitor = SequentialMonitor(rule, total=200)
        for start in range(0, 200, 20):
            decision = monitor.add(row[start : start + 20])
            if decision.stop:
                break
        assert (decision.n, decision.verdict) == (n, verdict)
    assert len(set(many.verdict)) == 3  # both verdicts and inconclusive occur


def test_a_settled_run_continued_to_the_end_keeps_its_verdict() -> None:
    """What `--resume` past a stop does: the same monitor takes the rest; the bounds only close in."""
    d = judge_with_dz(0.5).sample(np.random.default_rng(13), 1, ITEMS)[0]
    monitor = SequentialMonitor(StopRule(lo=-4, hi=4), total=ITEMS)
    decisions = [monitor.add(d[start : start + BATCH]) for start in range(0, ITEMS, BATCH)]
    first = next(x for x in decisions if x.stop)
    assert first.n < ITEMS and first.verdict == "better"
    later = decisions[decisions.index(first) :]
    assert all(x.verdict == "better" and x.lower >= first.lower and x.upper <= first.upper for x in later)
    assert decisions[-1].n == ITEMS and decisions[-1].stop_reason == "settled"


def _bounds(lower: float, upper: float, n: int = 50) -> SequenceBounds:
    return SequenceBounds("betting", 0.05, -4, 4, (n,), (lower,), (upper,), 0.0)


def test_the_verdict_follows_the_bounds_and_the_direction() -> None:
    better, lower_better = StopRule(lo=-4, hi=4), StopRule(lo=-4, hi=4, direction="lower")
    ni = StopRule(lo=-4, hi=4, question="non-inferior", margin=0.5)
    ni_lower = StopRule(lo=-4, hi=4, question="non-inferior", margin=0.5, direction="lower")
    cases = [
        (better, (0.1, 0.9), "better"), (better, (-0.9, -0.1), "worse"), (better, (-0.1, 0.9), "inconclusive"),
        (lower_better, (-0.9, -0.1), "better"), (lower_better, (0.1, 0.9), "worse"),
        (ni, (-0.4, 0.9), "non-inferior"), (ni, (-1.2, -0.6), "inferior"), (ni, (-0.6, 0.2), "inconclusive"),
        (ni_lower, (-0.9, 0.4), "non-inferior"), (ni_lower, (0.6, 1.2), "inferior"),
    ]  # fmt: skip
    for rule, (low, high), verdict in cases:
        decision = decide(_bounds(low, high), rule, total=400)
        assert decision.verdict == verdict, (rule, low, high)
        assert decision.settled == (verdict != "inconclusive") == decision.stop
        assert decision.stop_reason == ("settled" if decision.settled else None)


def test_caps_stop_an_unsettled_run_and_say_which() -> None:
    open_ = _bounds(-0.5, 0.5, n=100)
    capped = StopRule(lo=-4, hi=4, max_items=100, max_cost=2.0)
    assert decide(open_, capped, total=400, cost=0.5).stop_reason == "item cap"
    assert decide(open_, StopRule(lo=-4, hi=4, max_cost=2.0), total=400, cost=2.0).stop_reason == "cost cap"
    assert decide(open_, StopRule(lo=-4, hi=4, max_cost=2.0), total=400, cost=1.9).stop is False
    assert decide(open_, StopRule(lo=-4, hi=4), total=100).stop_reason == "all items"
    settled = decide(_bounds(0.1, 0.5, n=100), capped, total=400, cost=5.0)
    assert (settled.stop_reason, settled.verdict) == ("settled", "better")
    unsettled = decide(open_, capped, total=400, cost=0.5)
    assert (unsettled.settled, unsettled.verdict) == (False, "inconclusive")


def test_the_item_cap_applies_to_simulated_runs() -> None:
    d = judge_with_dz(0.5).sample(np.random.default_rng(11), 200, ITEMS)
    free = settle_many(d, StopRule(lo=-4, hi=4), looks=LOOKS)
    capped = settle_many(d, StopRule(lo=-4, hi=4, max_items=50), looks=LOOKS)
    assert capped.n.max() == 50 and set(capped.verdict[free.n > 50]) == {"inconclusive"}
    assert np.array_equal(capped.verdict[free.n <= 50], free.verdict[free.n <= 50])


def test_the_decision_is_recorded_as_plain_json() -> None:
    rule = StopRule(lo=-4, hi=4, question="non-inferior", margin=0.25, max_items=300)
    monitor = SequentialMonitor(rule, total=400)
    d = _judge_differences(12, 400, tilt=0.5)
    for start in range(0, 400, 20):
        decision = monitor.add(d[start : start + 20], cost=0.01 * (start + 20))
        if decision.stop:
            break
    record = json.loads(json.dumps(decision.to_dict()))
    assert record["progress"] == f"stopped at {decision.n} of 400" and decision.n < 400
    assert record["verdict"] == "non-inferior" and record["lower"] > -0.25
    assert record["rule"]["margin"] == 0.25 and "Theorem 3" in record["rule"]["method_reference"]
    assert "Items not run count as nothing" in record["rule"]["rule"]
    assert json.loads(json.dumps(monitor.bounds().to_dict()))["looks"][-1] == decision.n


# --- the run order ---------------------------------------------------------------------------------


def test_the_run_order_is_a_fixed_permutation_of_the_ids() -> None:
    ids = [f"item-{i}" for i in range(50)]
    order = item_order(ids, seed=7)
    assert sorted(order) == sorted(ids) and order != ids
    assert item_order(ids, seed=7) == order == item_order(list(reversed(ids)), seed=7)
    assert item_order(ids, seed=8) != order
    grown = item_order([*ids, "item-new"], seed=7)
    assert [i for i in grown if i != "item-new"] == order


def test_every_item_is_as_likely_to_run_first() -> None:
    ids = ["a", "b", "c", "d", "e"]
    firsts = [item_order(ids, seed=s)[0] for s in range(5000)]
    counts = np.array([firsts.count(i) for i in ids])
    chi2 = float(((counts - 1000) ** 2 / 1000).sum())
    assert chi2 < 18.47, counts  # the 0.999 quantile of chi-square with 4 degrees of freedom


# --- bad input -------------------------------------------------------------------------------------


def test_bad_input_is_a_clear_value_error() -> None:
    outside = "outside the declared range [-4, 4]"
    cases = [
        (lambda: confidence_sequence([], lo=-4, hi=4), "no differences"),
        (
            lambda: confidence_sequence([0.0, 5.0], lo=-4, hi=4),
            f"difference #2: difference 5 is {outside}",
        ),
        (lambda: confidence_sequence([0.0, 5.0], lo=-4, hi=4, item_ids=["q1", "q2"]), "item 'q2'"),
        (lambda: confidence_sequence([0.0, math.nan], lo=-4, hi=4), "is not a number"),
        (lambda: confidence_sequence([0.0], lo=4, hi=-4), "not a finite [low, high]"),
        (lambda: confidence_sequence([0.0], lo=-4, hi=4, alpha=0.0), "alpha must be in (0, 1)"),
        (lambda: confidence_sequence([0.0], lo=-4, hi=4, alpha=1.0), "alpha must be in (0, 1)"),
        (lambda: confidence_sequence([0.0], lo=-4, hi=4, method="bayes"), "unknown method"),
        (lambda: confidence_sequence([0.0, 1.0], lo=-4, hi=4, looks=[1]), "looks must be increasing"),
        (lambda: StopRule(lo=-4, hi=4, alpha=1.5), "alpha must be in (0, 1)"),
        (lambda: StopRule(lo=-4, hi=4, question="non-inferior", margin=-0.1), "margin must be 0 or more"),
        (lambda: StopRule(lo=-4, hi=4, margin=0.2), "non-inferiority question only"),
        (lambda: StopRule(lo=-4, hi=4, max_cost=0), "cost cap must be above 0"),
        (lambda: StopRule(lo=-4, hi=4, direction="none"), "direction higher or lower"),
        (lambda: SequentialMonitor(StopRule(lo=-4, hi=4), total=2).add([0.0, 0.0, 0.0]), "for a run of 2 items"),
        (lambda: SequentialMonitor(StopRule(lo=-4, hi=4), total=2).add([]), "no differences"),
        (lambda: item_order([], seed=1), "no items"),
        (lambda: item_order(["a", "b", "a"], seed=1), "'a' appears more than once"),
        (lambda: difference_range(5, 1), "not a finite [min, max]"),
    ]
    for call, words in cases:
        with pytest.raises(SequentialInputError) as caught:
            call()
        assert isinstance(caught.value, ValueError) and words in str(caught.value), (words, str(caught.value))


def test_a_bad_value_in_a_later_batch_is_named_by_its_place_in_the_run() -> None:
    monitor = SequentialMonitor(StopRule(lo=-1, hi=1), total=10)
    monitor.add([0.0, 1.0, -1.0])
    with pytest.raises(SequentialInputError) as caught:
        monitor.add([0.0, 2.0])
    assert caught.value.where == "difference #5" and caught.value.hint and "range" in caught.value.hint
    assert monitor.n == 3  # the rejected batch is not counted


# --- Monte Carlo: issue 22's check ------------------------------------------------------------------

SE_BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)
"""alpha plus three Monte Carlo standard errors of a rate near alpha over RUNS runs: 0.0646."""


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [judge_shape(0.0), binary_shape(0.0)], ids=["judge-1-5", "binary"])
def test_no_true_difference_gives_wrong_verdicts_within_alpha(method: str, shape: PairedShape) -> None:
    d = shape.sample(np.random.default_rng(2201), RUNS, ITEMS)
    stops = settle_many(d, StopRule(lo=shape.lo, hi=shape.hi, method=method), looks=LOOKS)
    wrong = float(np.isin(stops.verdict, ["better", "worse"]).mean())
    assert wrong <= SE_BOUND, f"{wrong:.4f} wrong verdicts with a look every {BATCH} items"


def test_non_inferiority_at_the_margin_is_claimed_within_alpha() -> None:
    shape = judge_with_mean(-0.2)  # the true difference sits exactly on the margin
    d = shape.sample(np.random.default_rng(2202), RUNS, ITEMS)
    stops = settle_many(d, StopRule(lo=-4, hi=4, question="non-inferior", margin=0.2), looks=LOOKS)
    assert float((stops.verdict == "non-inferior").mean()) <= SE_BOUND


def test_the_check_catches_a_sequence_that_is_not_anytime_valid() -> None:
    """Peeking at a fixed-sample 95% t-interval after every batch: the same check must fail it."""
    d = judge_shape(0.0).sample(np.random.default_rng(2203), RUNS, ITEMS)
    t = np.array(LOOKS)
    sums, squares = np.cumsum(d, axis=1)[:, t - 1], np.cumsum(d**2, axis=1)[:, t - 1]
    mean = sums / t
    half = 1.96 * np.sqrt((squares / t - mean**2) * t / (t - 1) / t)
    wrong = float(((mean - half > 0) | (mean + half < 0)).any(axis=1).mean())
    assert wrong > SE_BOUND


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [judge_with_dz(0.5), binary_shape(0.5)], ids=["judge-1-5", "binary"])
def test_half_a_standard_deviation_stops_before_40_percent_of_400_items(method: str, shape: PairedShape) -> None:
    assert shape.dz == pytest.approx(0.5)
    d = shape.sample(np.random.default_rng(2204), RUNS, ITEMS)
    stops = settle_many(d, StopRule(lo=shape.lo, hi=shape.hi, method=method), looks=LOOKS)
    assert float(np.median(stops.n)) < 0.4 * ITEMS, np.median(stops.n)
    assert float((stops.verdict == "worse").mean()) <= SE_BOUND


def test_crossings_agree_with_the_bisected_bounds() -> None:
    d = judge_with_dz(0.3).sample(np.random.default_rng(2205), 30, 200)
    looks = list(range(20, 201, 20))
    above, below = crossings(d, 0.0, lo=-4, hi=4, looks=looks)
    for row, up, down in zip(d, above, below, strict=True):
        cs = confidence_sequence(row, lo=-4, hi=4, looks=looks)
        assert list(up) == [lo > 0 for lo in cs.lower] and list(down) == [hi < 0 for hi in cs.upper]
