"""Find a stored run by its id: a mistyped id is answered with the closest ids the store holds."""

from __future__ import annotations

from pathlib import Path

from scoregate.errors import ScoregateError
from scoregate.store.run_files import MANIFEST, run_directory
from scoregate.support.suggest import did_you_mean

LIST_HINT = "list runs with `scoregate runs list`"


def stored_run_directory(runs_dir: Path, run_id: str) -> Path:
    """Return `runs_dir/run_id`; raise naming the closest stored run ids when it holds no run."""
    directory = run_directory(runs_dir, run_id)
    if not (directory / MANIFEST).is_file():
        stored = [d.name for d in runs_dir.iterdir() if (d / MANIFEST).is_file()] if runs_dir.is_dir() else []
        raise ScoregateError(f"no run {run_id!r} in {runs_dir}{closest(run_id, stored)}", hint=LIST_HINT)
    return directory


def closest(run_id: str, stored: list[str]) -> str:
    """Return "; did you mean `x`?" for the stored run ids closest to `run_id`, or "" when none is close."""
    suggestion = did_you_mean(run_id, stored)
    return f"; {suggestion}" if suggestion else ""
