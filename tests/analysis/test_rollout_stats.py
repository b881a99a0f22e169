"""The rollout statistics: units within time windows, the two-sample test read at every poll, SRM, guardrails.

The Monte Carlo checks are seeded, 2,000 simulated rollouts per case (bench/rollout_mc.py runs more cases).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoregate.analysis.rollout_monitor import PollData, RolloutMonitor, settle_rollouts
from scoregate.analysis.rollout_rules import Guardrail, RolloutRule
from scoregate.analysis.rollout_streams import CallFacts
from scoregate.analysis.rollout_units import UnitBuilder, form_units, group_sizes
from scoregate.analysis.sequential import SequentialInputError, crossings, crossings_at_counts
from support.rollout_traffic import HOUR, Traffic, simulated_units

RUNS, ALPHA = 2000, 0.05


def _rule(**overrides: object) -> RolloutRule:
    fields: dict[str, object] = {"lo": -1.0, "hi": 1.0, "share": 0.10, "question": "better"}
    return RolloutRule(**{**fields, **overrides})  # type: ignore[arg-type]


def _polls(traffic: Traffic, seed: int, poll_s: float = 900.0) -> list[PollData]:
    """One simulated rollout cut into polls; every trace is also its own session for the split check."""
    t, canary, score = traffic.sample(np.random.default_rng(seed))
    out = []
    for start in np.arange(0, traffic.hours * HOUR, poll_s):
        pick = (t >= start) & (t < start + poll_s)
        scored = [(float(a), bool(c), float(s)) for a, c, s in zip(t[pick], canary[pick], score[pick], strict=True)]
        out.append(PollData(scored=scored, assigned=[bool(c) for c in canary[pick]]))
    return out


# --- units -------------------------------------------------------------------------------------------


def test_group_sizes_follow_the_configured_share() -> None:
    assert group_sizes(0.10) == (1, 9)
    assert group_sizes(0.5) == (1, 1)
    assert group_sizes(0.75) == (3, 1)
    for bad in (0.0, 1.0, 1.2, -0.1):
        with pytest.raises(SequentialInputError, match="share"):
            group_sizes(bad)


def test_a_unit_is_one_canary_trace_against_the_mean_of_production_traces_of_the_same_window() -> None:
    # window 0: canary 1.0, production 0,0,0,1 (2 of them left over); window 1: a canary trace and no production
    at = [10, 11, 12, 13, 14, 15, 16, 3700]
    canary = [True, False, False, False, False, False, False, True]
    value = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    units = form_units(np.array(at), np.array(canary), np.array(value), window_s=3600, share=0.25)
    assert group_sizes(0.25) == (1, 3)
    assert units.difference.tolist() == pytest.approx([1.0 - 1 / 3])
    assert units.completed_at.tolist() == [13.0]


def test_the_builder_poll_by_poll_makes_the_units_of_the_whole_rollout_and_resumes_from_its_state() -> None:
    t, canary, score = Traffic(hours=30, drift=0.2).sample(np.random.default_rng(5))
    whole = form_units(t, canary, score, window_s=HOUR, share=0.1)
    builder = UnitBuilder(HOUR, 0.1)
    cuts = np.sort(np.random.default_rng(6).choice(t.size, 12, replace=False))
    for part in np.split(np.arange(t.size), cuts):
        builder.add([(float(t[i]), bool(canary[i]), float(score[i])) for i in part])
        builder = UnitBuilder.from_dict(json.loads(json.dumps(builder.to_dict())))
    assert len(whole.difference) > 100
    assert builder.differences == pytest.approx(whole.difference.tolist())


def test_crossings_at_each_run_s_own_counts_agree_with_crossings_at_common_looks() -> None:
    d = np.random.default_rng(2).choice([-1.0, 0.0, 1.0], p=[0.2, 0.5, 0.3], size=(50, 300))
    looks = np.arange(10, 301, 10)
    above, below = crossings(d, 0.0, lo=-1, hi=1, alpha=ALPHA, looks=looks)
    at_above, at_below = crossings_at_counts(d, 0.0, lo=-1, hi=1, alpha=ALPHA, counts=np.tile(looks, (50, 1)))
    assert (above == at_above).all() and (below == at_below).all() and above.any()
    none_yet = crossings_at_counts(d, 0.0, lo=-1, hi=1, alpha=ALPHA, counts=np.zeros((50, 3), dtype=int))
    assert not none_yet[0].any() and not none_yet[1].any()


# --- the decision ------------------------------------------------------------------------------------


def test_a_better_canary_is_promoted_and_the_vectorised_decisions_match_the_monitor() -> None:
    traffic, rule = Traffic(effect=0.15), _rule()
    diffs, counts = simulated_units(traffic, 6, 11, share=0.1, window_s=HOUR, poll_s=900)
    first, words = settle_rollouts(diffs, counts, rule)
    for r in range(6):
        monitor = RolloutMonitor.start(rule)
        readings = []
        for p in range(counts.shape[1]):
            monitor.metric.add(diffs[r, counts[r, p - 1] if p else 0 : counts[r, p]].tolist())
            readings.append(monitor._decide(()))
        decided = [i for i, (word, _) in enumerate(readings) if word != "continue"]
        assert (decided[0] if decided else -1) == first[r]
        assert (readings[decided[0]][0] if decided else "continue") == words[r]
    assert (words == "promote").sum() >= 4


def test_a_killed_watch_resumed_from_its_record_reads_as_one_that_never_stopped() -> None:
    polls = _polls(Traffic(hours=24, effect=-0.2), 21)
    rule = _rule(guardrails=(Guardrail("error_rate", 0.5),))
    straight, resumed = RolloutMonitor.start(rule), RolloutMonitor.start(rule)
    for data in polls:
        expected = straight.poll(data)
        resumed = RolloutMonitor.from_dict(json.loads(json.dumps(resumed.to_dict())))
        assert resumed.poll(data) == expected
    assert expected.decision == "rollback" and "worse" in expected.reason
    assert expected.reason.endswith("threshold 0")  # the words say 0, not the margin's "-0"


def test_a_broken_split_halts_and_a_true_one_does_not() -> None:
    broken = RolloutMonitor.start(_rule())
    readings = [broken.poll(data) for data in _polls(Traffic(served_share=0.14), 3)]
    halted = [r for r in readings if r.decision == "halt"]
    assert halted and "sample ratio mismatch" in halted[0].reason and "configured 10.0%" in halted[0].reason
    assert all(r.decision == "halt" for r in readings[readings.index(halted[0]) :])
    fine = RolloutMonitor.start(_rule())
    assert all(fine.poll(data).decision != "halt" for data in _polls(Traffic(), 3))


@pytest.mark.parametrize(
    ("guardrail", "bad", "good"),
    [
        (Guardrail("error_rate", 0.05), CallFacts(error=True), CallFacts(error=False)),
        (Guardrail("p95_latency_ms", 2000), CallFacts(False, latency_ms=2500), CallFacts(False, latency_ms=900)),
        (Guardrail("cost_per_call_usd", 0.01), CallFacts(False, cost_usd=0.03), CallFacts(False, cost_usd=0.004)),
    ],
)
def test_a_guardrail_rolls_back_only_once_the_canary_is_shown_past_its_limit(
    guardrail: Guardrail, bad: CallFacts, good: CallFacts
) -> None:
    monitor = RolloutMonitor.start(_rule(guardrails=(guardrail,)))
    first = monitor.poll(PollData(canary_calls=[bad, good]))
    assert first.decision == "continue" and not first.guardrails[0].breached  # 1 of 2: not yet shown
    later = monitor.poll(PollData(canary_calls=[bad] * 40 + [good] * 10))
    assert later.decision == "rollback" and f"guardrail {guardrail.name} breached" in later.reason
    calm = RolloutMonitor.start(_rule(guardrails=(guardrail,)))
    assert calm.poll(PollData(canary_calls=[good] * 200)).decision == "continue"


@pytest.mark.parametrize(
    ("fields", "where"),
    [({"share": 0.0}, "share"), ({"share": 1.2}, "share"), ({"window_s": 0}, "window"), ({"alpha": 1.5}, "alpha")],
)
def test_a_bad_rule_names_its_field(fields: dict[str, object], where: str) -> None:
    with pytest.raises(SequentialInputError, match=where):
        _rule(**fields)
    with pytest.raises(SequentialInputError, match="unknown guardrail"):
        Guardrail("latency", 1.0)  # type: ignore[arg-type]


# --- Monte Carlo -------------------------------------------------------------------------------------


@pytest.mark.scale
def test_equal_versions_drifting_together_are_wrongly_decided_at_most_alpha_of_the_time() -> None:
    traffic = Traffic(drift=0.2, scored_share=0.3)
    diffs, counts = simulated_units(traffic, RUNS, 7, share=0.1, window_s=HOUR, poll_s=900)
    _, words = settle_rollouts(diffs, counts, _rule())
    assert (words != "continue").mean() <= ALPHA


@pytest.mark.scale
def test_without_time_windows_the_same_drift_makes_wrong_decisions() -> None:
    """The reason for the windows: production scored less often is grouped with canary traces of hours before."""
    traffic = Traffic(drift=0.2, scored_share=0.3)
    diffs, counts = simulated_units(traffic, RUNS, 7, share=0.1, window_s=1e9, poll_s=900)
    _, words = settle_rollouts(diffs, counts, _rule())
    assert (words != "continue").mean() > 2 * ALPHA


@pytest.mark.scale
def test_a_realistic_gain_is_promoted_in_most_rollouts() -> None:
    diffs, counts = simulated_units(Traffic(effect=0.1, drift=0.2), RUNS, 9, share=0.1, window_s=HOUR, poll_s=900)
    _, words = settle_rollouts(diffs, counts, _rule())
    assert (words == "promote").mean() > 0.8
    assert (words == "rollback").mean() <= ALPHA / 2
