"""The replay's verdict is read from the CI of the candidate's win rate, over every item (failures as losses)."""

from __future__ import annotations

from scoregate.analysis.paired import preference_win_rate
from scoregate.app.replay import replay_tally, verdict_of


def test_the_verdict_agrees_with_the_ci() -> None:
    better = preference_win_rate(["B"] * 18 + ["A"] * 2)
    worse = preference_win_rate(["A"] * 18 + ["B"] * 2)
    unsure = preference_win_rate(["B", "A", "tie", "B"])

    assert better.ci_low is not None and better.ci_low > 0.5 and verdict_of(better) == "better"
    assert worse.ci_high is not None and worse.ci_high < 0.5 and verdict_of(worse) == "worse"
    assert unsure.ci_low is not None and unsure.ci_high is not None
    assert unsure.ci_low <= 0.5 <= unsure.ci_high and verdict_of(unsure) == "not worse"


def test_undecided_items_and_skipped_traces_are_losses_in_the_denominator() -> None:
    counted, failed = replay_tally({"a": "B", "b": None, "c": "tie"}, skipped=2)

    assert sorted(counted) == ["A", "A", "A", "B", "tie"]
    assert failed == {"not judged": 1, "not replayed": 2}


def test_a_candidate_that_wins_every_judged_item_but_fails_many_is_not_better() -> None:
    counted, _ = replay_tally({f"i{n}": "B" for n in range(10)} | {f"f{n}": None for n in range(10)}, skipped=0)

    assert verdict_of(preference_win_rate(counted)) != "better"
