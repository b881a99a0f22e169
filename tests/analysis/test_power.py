"""Power-aware planning: the smallest detectable difference and the items × repeats a difference needs."""

from __future__ import annotations

import math

import pytest

from scoregate.analysis.power import (
    Variance,
    corrected_fixed_variance,
    detectable,
    items_needed,
    paired_variance,
    plan_rows,
    split_variance,
    youden_relative,
)


def test_the_textbook_answer_for_a_paired_difference() -> None:
    # sd of the differences 1, Δ 0.5, power 0.8, two-sided 5%: n = ((1.960 + 0.842) / 0.5)² = 31.4 → 32
    row = items_needed(Variance(between=1.0, within=None), 0.5, 1, power=0.8)
    assert row.items == 32 and row.reason is None


def test_the_smallest_detectable_difference_shrinks_with_the_root_of_the_items() -> None:
    variance = Variance(between=1.0, within=None)
    assert detectable(variance, 100, 1, power=0.8) == pytest.approx((1.959964 + 0.841621) * 0.1, rel=1e-5)
    assert detectable(variance, 400, 1, power=0.8) == pytest.approx(detectable(variance, 100, 1, power=0.8) / 2)


def test_repeats_only_shrink_the_repeat_noise() -> None:
    variance = Variance(between=0.2, within=0.8)
    rows = {row.repeats: row.items for row in plan_rows(variance, 0.1, power=0.8)}
    k = ((1.959964 + 0.841621) / 0.1) ** 2
    assert rows == {r: math.ceil(k * (0.2 + 0.8 / r)) for r in (1, 2, 3, 5)}
    assert rows[5] > math.ceil(k * 0.2)  # never below what the items' own spread needs
    unknown = plan_rows(Variance(between=1.0, within=None), 0.1, power=0.8)
    assert [row.repeats for row in unknown] == [1]


def test_a_fixed_part_no_item_shrinks_can_make_a_difference_undetectable() -> None:
    row = items_needed(Variance(between=1.0, within=None, fixed=0.01), 0.2, 1, power=0.8)
    assert row.items is None
    assert row.reason == "the calibration labels alone leave more uncertainty: add human labels"
    assert detectable(Variance(between=1.0, within=None, fixed=0.01), 10**9, 1, power=0.8) == pytest.approx(
        (1.959964 + 0.841621) * 0.1, rel=1e-4
    )


def test_the_variance_of_repeated_items_splits_into_between_and_within() -> None:
    between, within, repeats = split_variance({"a": [1.0, 3.0], "b": [5.0, 7.0]})
    # item means 2 and 6 vary by 8; each item's repeats by 2; 8 - 2 / 2 = 7
    assert (between, within, repeats) == (pytest.approx(7.0), pytest.approx(2.0), 2.0)
    assert split_variance({"a": [1.0], "b": [3.0], "c": [5.0]})[1] is None


def test_paired_differences_take_their_variance_over_the_shared_items() -> None:
    between, n = paired_variance(
        {"a": [2.0], "b": [4.0], "c": [9.0], "d": [1.0]}, {"a": [1.0], "b": [1.0], "c": [5.0]}, None
    )
    assert n == 3 and between == pytest.approx(7 / 3)  # differences 1, 3, 4
    with pytest.raises(ValueError, match="two items measured in both runs"):
        paired_variance({"a": [1.0]}, {"a": [1.0]}, None)


def test_the_corrected_estimate_s_fixed_part_is_its_variance_beyond_the_raw_mean_s() -> None:
    half = 1.959964 * math.sqrt(0.05)
    assert corrected_fixed_variance(1 - half, 1 + half, 0.01, level=0.95) == pytest.approx(0.04, rel=1e-5)


def test_a_part_that_grows_with_the_difference_inflates_what_items_detect_and_can_forbid_it() -> None:
    k = 1.959964 + 0.841621
    # Δ = k·√(1/100 + 0.05·Δ²)  ⇒  Δ = k·0.1/√(1 − 0.05·k²)
    variance = Variance(between=1.0, within=None, relative=0.05)
    assert detectable(variance, 100, 1, power=0.8) == pytest.approx(k * 0.1 / math.sqrt(1 - 0.05 * k * k), rel=1e-5)
    # items: n = 1 / (Δ²/k² − 0.05·Δ²) at Δ = 0.5
    row = items_needed(variance, 0.5, 1, power=0.8)
    assert row.items == math.ceil(1 / (0.25 / k**2 - 0.05 * 0.25))
    too_unsure = Variance(between=1.0, within=None, relative=1 / k**2 + 0.01)
    assert math.isinf(detectable(too_unsure, 10**9, 1, power=0.8))
    assert items_needed(too_unsure, 0.5, 1, power=0.8).items is None


def test_the_youden_part_from_a_calibration_set_with_known_numbers() -> None:
    # specificity 0.6 on 20 human fails, sensitivity 0.95 on 20 human passes: J = 0.55
    expected = (0.6 * 0.4 / 20 + 0.95 * 0.05 / 20) / 0.55**2
    assert youden_relative(0.6, 0.95, 20, 20) == pytest.approx(expected)
    assert expected == pytest.approx(0.04752, rel=1e-3)
