"""The tracks a run report asks for its blocks, and the run-level metrics those blocks offer to gates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoregate.scoring.base import Evaluator
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import TrackSettings


def track_reports(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    """Return every track block of a run (`{}` when it has no track evaluator)."""
    from scoregate.tracks.extraction.run_summary import extraction_track_report
    from scoregate.tracks.tags.run_summary import tags_track_report

    blocks: dict[str, Any] = {}
    for report in (extraction_track_report, tags_track_report):
        blocks.update(report(evaluators, store, summary, settings))
    return blocks


def gate_metrics(blocks: dict[str, Any]) -> dict[str, Any]:
    """Take the run-level metrics every track block offers to gates out of the blocks, by name."""
    found: dict[str, Any] = {}
    for block in blocks.values():
        if isinstance(block, dict):
            found.update(block.pop("gate_metrics", None) or {})
    return found
