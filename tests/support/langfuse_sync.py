"""`langfuse-sync` as a library call (`sync_stored_run` through `mirror_all`), returning Langfuse's own report."""

from __future__ import annotations

from pathlib import Path

from scoregate.app.mirror_sync import sync_stored_run
from scoregate.sinks.langfuse.experiment_mirror import MirrorReport


def sync_run(root: Path, run_id: str) -> MirrorReport:
    """Mirror stored run `run_id` to Langfuse as `langfuse-sync` does; raise unless it is fully mirrored."""
    outcome = sync_stored_run(root, run_id, "langfuse")
    outcome.raise_for("langfuse")
    report = outcome.results["langfuse"].report.detail
    assert isinstance(report, MirrorReport)
    return report
