"""The held-out check: a random calibration sample of a fully rated set, the rest corrected as a run."""

from __future__ import annotations

import numpy as np
import pytest

from scoregate.analysis.corrected_check import held_out_check
from scoregate.analysis.corrected_estimators import ppi_mean


def _lenient(n: int, seed: int) -> tuple[list[float | None], list[float | None]]:
    """Humans 1-5; the judge says one point more (at most 5) two times in three."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=n).astype(float)
    judge = np.minimum(5, human + (rng.random(n) < 2 / 3))
    return list(map(float, judge)), list(map(float, human))


def test_the_corrected_mean_of_the_rest_equals_ppi_over_the_sample_and_holds_the_human_mean() -> None:
    judge, human = _lenient(400, seed=3)
    check = held_out_check(judge, human, 100, seed=7)
    chosen = set(np.random.default_rng(7).choice(range(400), size=100, replace=False).tolist())
    rest = [i for i in range(400) if i not in chosen]
    expected = ppi_mean(
        [judge[i] for i in rest], [judge[i] for i in sorted(chosen)], [human[i] for i in sorted(chosen)]
    )
    assert (check.n_run, check.n_human, check.labels) == (300, 300, 100)
    assert check.corrected.value == pytest.approx(expected.value)
    assert check.raw_mean == pytest.approx(np.mean([judge[i] for i in rest]))
    assert check.human_mean == pytest.approx(np.mean([human[i] for i in rest]))
    assert check.raw_mean is not None and check.human_mean is not None
    assert check.raw_mean - check.human_mean > 0.4  # the judge is lenient
    assert check.covered is True


def test_items_without_a_human_score_stay_in_the_run_but_out_of_the_human_mean() -> None:
    judge, human = _lenient(50, seed=1)
    human[0] = None
    check = held_out_check(judge, human, 20, seed=0)
    assert (check.n_run, check.n_human) == (30, 29)  # item 0 has no human score: never drawn, never compared
    assert check.n_run + check.labels == 50


def test_too_many_labels_for_the_set_is_a_clear_error() -> None:
    judge, human = _lenient(30, seed=1)
    with pytest.raises(ValueError, match="30 labels of 30 items rated by both: leave at least 2 for the run"):
        held_out_check(judge, human, 30)
