"""The runs of a store that count for a leaderboard: finished, not marked invalid, with a summary."""

from __future__ import annotations

from pathlib import Path

from scoregate.store.record import Manifest, RunSummary
from scoregate.store.run_store import DamagedRun, RunStore, list_runs

ValidRun = tuple[RunStore, Manifest, RunSummary]
"""A run that counts: its store, manifest and summary."""


def invalid_reason(manifest: Manifest) -> str | None:
    """Return why a run must not count (not finished, or marked invalid), or None when it is valid."""
    for key in ("invalidated", "invalid"):
        mark = (manifest.model_extra or {}).get(key)
        if mark:
            return f"marked {key}" + (f": {mark['reason']}" if isinstance(mark, dict) and "reason" in mark else "")
    if manifest.status != "finished":
        return f"status {manifest.status}"
    return None


def valid_runs(runs_dir: Path, *, experiment: str | None = None) -> tuple[list[ValidRun], list[dict[str, str]]]:
    """The finished, valid runs in `runs_dir` (optionally of one experiment), and the others with the reason."""
    skipped: list[dict[str, str]] = []
    candidates: list[ValidRun] = []
    for store in list_runs(runs_dir):
        try:
            manifest, summary = store.manifest_record, store.summary_record
        except DamagedRun as exc:  # one damaged run must not hide the others
            skipped.append({"run_id": store.run_id, "reason": exc.render()})
            continue
        if experiment is not None and manifest.receipts.experiment != experiment:
            continue
        why = invalid_reason(manifest)
        if why is None and summary is None:
            why = "no summary"
        if why is not None or summary is None:
            skipped.append({"run_id": store.run_id, "reason": str(why)})
            continue
        candidates.append((store, manifest, summary))
    return candidates, skipped
