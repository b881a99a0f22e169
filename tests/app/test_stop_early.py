"""`scoregate run EXPERIMENT --stop-early`: the range of a score comes from its evaluator file. The stop-early
runs themselves, through the real executable, are in tests/e2e/test_stop_early_processes.py."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("experiment", "metric", "bounds"),
    [("fact_recall", "word_recall", (0.0, 100.0)), ("smoke", "faithfulness_score", (1.0, 5.0)),
     ("smoke", "tldr_within_cap", (0.0, 1.0)), ("smoke", "word_count", None)],
)  # fmt: skip
def test_the_range_of_a_score_comes_from_its_evaluator_file(
    experiment: str, metric: str, bounds: tuple[float, float] | None
) -> None:
    """A custom metric's `range:`, a judge field's `range:`, a boolean; a count has none (refused)."""
    from scoregate.app.run.stop_early import score_range
    from scoregate.catalog.plan import plan_experiment
    from scoregate.tracks.project import load_project
    from support.projects import REPO

    assert score_range(plan_experiment(load_project(REPO), experiment), metric) == bounds
