"""Calibration planning for a pass/fail judge: the corrected pass rate per judged class and where labels go."""

from __future__ import annotations

import math

import pytest

from scoregate.analysis.label_allocation import JudgedClass, allocate, corrected, judged_classes


def classes() -> tuple[JudgedClass, JudgedClass]:
    # 60% of 1,000 items judged pass; 20 labels in each class: 16 of the judged-pass items pass, 4 of the others
    return JudgedClass(0.6, 20, 16), JudgedClass(0.4, 20, 4)


def test_the_corrected_rate_and_its_interval_by_hand() -> None:
    passed, failed = classes()
    found = corrected(passed, failed, 1000)
    assert found.value == pytest.approx(0.6 * 0.8 + 0.4 * 0.2)  # 0.56
    var = 0.36 * 0.16 / 20 + 0.16 * 0.16 / 20 + (0.8 - 0.2) ** 2 * 0.6 * 0.4 / 1000
    assert found.se == pytest.approx(math.sqrt(var))
    assert found.ci_low == pytest.approx(0.56 - 1.959964 * math.sqrt(var), rel=1e-6)


def test_more_labels_go_where_the_interval_shrinks_most() -> None:
    passed, failed = classes()
    # planning shares 17/22 and 5/22 have the same spread; the judged-pass class weighs 0.6 against 0.4, so the
    # Neyman split is 3:2 (30:20): all 10 new labels go to judged-pass items
    plan = allocate(passed, failed, 1000, 10)
    assert (plan.judged_pass, plan.judged_fail) == (10, 0)
    assert plan.half_width_after < plan.half_width_random < (plan.half_width_now or 0)


def test_a_class_without_labels_gets_them_first() -> None:
    plan = allocate(JudgedClass(0.5, 30, 20), JudgedClass(0.5, 0, 0), 500, 3)
    assert plan.judged_fail >= 1 and plan.half_width_now is None
    assert corrected(JudgedClass(0.5, 30, 20), JudgedClass(0.5, 0, 0), 500).reason == (
        "no human label on an item judged fail"
    )


def test_judged_classes_count_the_run_and_its_labels() -> None:
    passed, failed = judged_classes([1, 1, 0, 0, 1], [1, None, 0, 1, 0])
    assert passed == JudgedClass(0.6, 2, 1)
    assert failed == JudgedClass(pytest.approx(0.4), 2, 1)  # type: ignore[arg-type]
