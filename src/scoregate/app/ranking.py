"""Ranking stored runs by id (`scoregate rank`, `compare` with more than two runs)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scoregate.analysis.model_ranking import ModelRanking, rank_runs
from scoregate.errors import ScoregateError
from scoregate.store.invalidation import refuse_invalid
from scoregate.store.run_store import RunStore
from scoregate.tracks.registry import ranked_metrics


def rank_stored_runs(root: Path, run_ids: Sequence[str], *, metric: str | None = None) -> ModelRanking:
    """Open runs by id in the project's run store and rank them (the `scoregate rank` entry point)."""
    from scoregate.catalog.directions import project_directions
    from scoregate.tracks.project import load_project

    if len(run_ids) < 2:
        raise ScoregateError("ranking needs at least two runs", hint="pass two or more run ids")
    project = load_project(root)
    settings = project.config.settings
    stores = [RunStore.open(root / "runs", run_id) for run_id in run_ids]
    for store in stores:
        refuse_invalid(store, "rank")
    return rank_runs(
        stores,
        metric=metric,
        directions=project_directions(project),
        alpha=1 - settings.confidence_level,
        resamples=settings.bootstrap_resamples,
        seed=settings.seed,
        tracks=ranked_metrics(),
    )
