"""The judge cascade's guarantee: the first judge's confidence threshold by fixed-sequence testing."""

from __future__ import annotations

import math

import pytest

from scoregate.analysis.cascade import (
    agreement_p_value,
    agrees,
    cascade_cost,
    choose_threshold,
    min_labels,
    sample_confidence,
)


def test_the_fewest_labels_that_can_guarantee_a_target() -> None:
    # 0.8 ** 10 = 0.107 > 0.1, 0.8 ** 11 = 0.086: ten agreeing labels cannot show 0.8 at δ = 0.1, eleven can
    assert min_labels(0.8, 0.1) == 11
    assert min_labels(0.9, 0.05) == 29


def test_the_p_value_is_the_binomial_upper_tail_at_the_target() -> None:
    assert agreement_p_value(agreed=20, kept=20, target=0.8) == pytest.approx(0.8**20)
    # P(Bin(3, 0.5) >= 2) = (3 + 1) / 8
    assert agreement_p_value(agreed=2, kept=3, target=0.5) == pytest.approx(0.5)


def test_confidence_is_the_share_of_samples_that_give_the_answer() -> None:
    assert sample_confidence([4, 4, 5, 4, None], 4) == pytest.approx(0.6)
    assert sample_confidence([1, 1, 1], 1) == 1.0
    assert sample_confidence([3, 4], 3.5) == 0.0
    assert sample_confidence([None, None], None) == 0.0


def test_agreement_is_within_the_tolerance() -> None:
    assert agrees(4, 4.333, 0.5)
    assert not agrees(4, 4.667, 0.5)
    assert agrees(1, 1, 0.0)
    assert not agrees(1, 0, 0.0)


def test_the_threshold_is_the_last_one_the_sequence_rejects() -> None:
    confidences = [1.0] * 30 + [0.6] * 30
    agreement = [True] * 30 + [True] * 15 + [False] * 15
    choice = choose_threshold(confidences, agreement, target=0.8, delta=0.1)
    assert choice.threshold == 1.0
    assert choice.kept == 30 and choice.labels == 60
    assert choice.share_kept == pytest.approx(0.5)
    assert choice.kept_agreement == 1.0
    assert [round(t.threshold, 3) for t in choice.tested] == [1.0, 0.6]
    assert choice.tested[0].p_value == pytest.approx(0.8**30)
    assert choice.tested[1].p_value > 0.1
    assert choice.reason is None


def test_the_sequence_stops_at_its_first_failure() -> None:
    # a lower threshold that would pass on its own is never reached once a higher one fails: that is what keeps
    # the error at δ
    confidences = [1.0] * 30 + [0.8] * 10 + [0.6] * 200
    agreement = [True] * 30 + [False] * 10 + [True] * 200
    choice = choose_threshold(confidences, agreement, target=0.8, delta=0.1)
    assert choice.threshold == 1.0
    assert [t.threshold for t in choice.tested] == [1.0, 0.8]


def test_every_item_kept_when_the_whole_set_passes() -> None:
    confidences = [0.2, 0.4, 0.6, 0.8, 1.0] * 20
    choice = choose_threshold(confidences, [True] * 100, target=0.8, delta=0.1)
    assert choice.threshold == 0.2
    assert choice.share_kept == 1.0


def test_too_few_labels_keep_nothing_and_say_why() -> None:
    choice = choose_threshold([1.0] * 8, [True] * 8, target=0.8, delta=0.1)
    assert choice.threshold is None
    assert choice.kept == 0 and choice.share_kept == 0.0
    assert choice.reason == (
        "8 labelled items cannot guarantee agreement >= 0.8 with probability 0.9: it takes at least 11 "
        "(the strong judge scores every item)"
    )


def test_a_first_judge_below_the_target_keeps_nothing() -> None:
    choice = choose_threshold([1.0] * 50, [True] * 30 + [False] * 20, target=0.8, delta=0.1)
    assert choice.threshold is None
    assert choice.reason is not None and "no confidence threshold" in choice.reason
    assert "0.600 on the 50 most confident" in choice.reason


def test_the_cost_saved_is_the_strong_calls_not_made_less_the_first_judges() -> None:
    cost = cascade_cost(items=10, kept=6, first_cost=0.01, strong_cost=0.08, strong_items=4)
    # a strong call costs 0.02 an item; 6 kept items saved 0.12, the first judge spent 0.01
    assert cost.strong_per_item == pytest.approx(0.02)
    assert cost.saved == pytest.approx(0.11)
    assert cost.saved_share == pytest.approx(0.11 / 0.2)
    assert cost.reason is None


def test_the_cost_saved_is_null_with_a_reason_without_prices() -> None:
    cost = cascade_cost(items=10, kept=6, first_cost=None, strong_cost=None, strong_items=4)
    assert cost.saved is None
    assert cost.reason == "the judge models report no cost (give them input_cost_per_mtok and output_cost_per_mtok)"
    none_escalated = cascade_cost(items=10, kept=10, first_cost=0.0, strong_cost=0.0, strong_items=0)
    assert none_escalated.saved is None
    assert none_escalated.reason == "no item went to the strong judge, so its cost per item is unknown"
    assert math.isclose(cascade_cost(items=4, kept=0, first_cost=0.0, strong_cost=0.4, strong_items=4).saved or 0, 0)
