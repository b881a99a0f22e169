"""The corrected stop-early sequence: Δθ = Δp/J bounded by the run's confidence sequence and the calibration set's
Clopper–Pearson interval of Youden's J, each at half of α."""

from __future__ import annotations

import numpy as np
import pytest

from scoregate.analysis.corrected_sequential import (
    CorrectedMonitor,
    YoudenBound,
    clopper_pearson,
    corrected_bounds,
    youden_bound,
)
from scoregate.analysis.sequential import confidence_sequence
from scoregate.analysis.sequential_stop import StopRule


def test_clopper_pearson_at_the_ends_has_its_closed_form() -> None:
    # k = n: the lower end is (α/2)^(1/n); k = 0: the upper end is 1 − (α/2)^(1/n)
    assert clopper_pearson(20, 20, 0.0125)[0] == pytest.approx(0.00625 ** (1 / 20))
    assert clopper_pearson(0, 20, 0.0125)[1] == pytest.approx(1 - 0.00625 ** (1 / 20))
    assert clopper_pearson(20, 20, 0.0125)[1] == 1.0


def test_a_perfect_judge_on_20_and_20_labels_gets_j_from_the_closed_form() -> None:
    bound = youden_bound([0.0] * 20 + [1.0] * 20, [0.0] * 20 + [1.0] * 20, alpha=0.025)
    assert isinstance(bound, YoudenBound)
    assert bound.low == pytest.approx(2 * 0.00625 ** (1 / 20) - 1)  # 0.5519
    assert bound.high == 1.0 and bound.point == 1.0


def test_a_judge_the_labels_cannot_show_better_than_chance_gets_the_reason() -> None:
    reason = youden_bound([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0], [0.0] * 6 + [1.0] * 6, alpha=0.025)
    assert isinstance(reason, str)
    assert reason.startswith("its calibration set (6 human fails, 6 passes; specificity 0.667, sensitivity 0.667)")
    assert reason.endswith("which reaches 0")
    few = youden_bound([0.0] * 3 + [1.0] * 20, [0.0] * 3 + [1.0] * 20, alpha=0.025)
    assert few == "the calibration set has 3 human fails and 20 human passes: the correction needs at least 5 of each"


def test_the_corrected_bounds_take_the_ratio_s_extremes() -> None:
    bound = YoudenBound(0.5, 0.8, 0.9, 0.8, 20, 20, 0.025)
    assert corrected_bounds(-0.1, 0.2, bound) == pytest.approx((-0.2, 0.4))  # −0.1/0.5, 0.2/0.5
    assert corrected_bounds(0.1, 0.2, bound) == pytest.approx((0.125, 0.4))  # 0.1/0.8
    assert corrected_bounds(-0.3, -0.1, bound) == pytest.approx((-0.6, -0.125))  # −0.1/0.8
    assert corrected_bounds(-0.6, 0.6, bound) == (-1.0, 1.0)


def test_a_non_inferiority_stop_reads_the_corrected_bounds_against_the_margin() -> None:
    bound = YoudenBound(0.5, 0.8, 0.9, 0.8, 20, 20, 0.025)
    rule = StopRule(-1.0, 1.0, question="non-inferior", margin=0.1, alpha=0.025)
    monitor = CorrectedMonitor(rule, 400, bound)
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=300)  # a judged difference of about 0
    decision = None
    for start in range(0, 300, 20):
        decision = monitor.add(d[start : start + 20])
        if decision.settled:
            break
    assert decision is not None
    judged = confidence_sequence(d[: monitor.n], lo=-1, hi=1, alpha=0.025, looks=list(range(20, monitor.n + 1, 20)))
    low, high = max(judged.lower), min(judged.upper)
    assert (decision.lower, decision.upper) == pytest.approx(corrected_bounds(low, high, bound))
    assert decision.settled == (low / 0.5 > -0.1 if low < 0 else True)  # non-inferior: Δp > −margin·J_lo
