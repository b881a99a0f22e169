"""The leaderboard over a project's stored runs (`scoregate leaderboard`), and its file `runs/leaderboard.json`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.analysis.leaderboard import leaderboard_of
from scoregate.errors import ScoregateError
from scoregate.store.valid_runs import valid_runs

LEADERBOARD = "leaderboard.json"


def build_leaderboard(
    runs_dir: Path,
    *,
    experiment: str | None = None,
    metric: str | None = None,
    lower_is_better: bool = False,
    min_coverage: float = 0.8,
) -> dict[str, Any]:
    """Return the leaderboard over every valid run in `runs_dir` (optionally of one experiment)."""
    candidates, skipped = valid_runs(runs_dir, experiment=experiment)
    return leaderboard_of(
        candidates, skipped, source=str(runs_dir), experiment=experiment, metric=metric,
        lower_is_better=lower_is_better, min_coverage=min_coverage,
    )  # fmt: skip


@dataclass(frozen=True)
class Leaderboard:
    """The leaderboard of a project's runs and the file it was written to."""

    board: dict[str, Any]
    path: Path


def update_leaderboard(
    root: Path, *, experiment: str | None = None, metric: str | None = None, lower_is_better: bool = False
) -> Leaderboard:
    """Rank the project's valid runs (its `min_coverage` flags thin entries) and write `runs/leaderboard.json`."""
    from scoregate.tracks.project import load_project

    settings = load_project(root).config.settings
    runs_dir = root / "runs"
    board = build_leaderboard(
        runs_dir, experiment=experiment, metric=metric, lower_is_better=lower_is_better,
        min_coverage=settings.min_coverage,
    )  # fmt: skip
    return Leaderboard(board, write_leaderboard(runs_dir, board))


def write_leaderboard(runs_dir: Path, board: dict[str, Any]) -> Path:
    """Write `runs/leaderboard.json` atomically; return its path."""
    path = runs_dir / LEADERBOARD
    tmp = path.with_name(f"{LEADERBOARD}.{os.getpid()}.tmp")
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(board, indent=2), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        if tmp.is_file():
            tmp.unlink()
        raise ScoregateError(
            f"cannot write the leaderboard: {exc.strerror}",
            where=str(path),
            hint="make runs/leaderboard.json a writable file (remove a folder of that name)",
        ) from None
    return path
