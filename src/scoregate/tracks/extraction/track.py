"""The extraction track as the registry knows it: its kind, its run block and its headline metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scoregate.tracks.base import Track, TrackSettings
from scoregate.tracks.extraction.aggregation import labelled
from scoregate.tracks.extraction.report_view import extraction_view
from scoregate.tracks.extraction.spec import KIND

if TYPE_CHECKING:
    from scoregate.scoring.base import Evaluator
    from scoregate.store.record_base import Record
    from scoregate.store.run_store import RunStore


def _report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    if not any(type(e).__module__ == "scoregate.tracks.extraction.kind" for e in evaluators):
        return {}  # no ExtractionEvaluator in the run: its summary code is not even imported
    from scoregate.tracks.extraction.run_summary import extraction_track_report

    return extraction_track_report(evaluators, store, summary, settings)


def headline(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The run-level (micro) extraction metrics of a summary.json, by name; `{}` for a run without the track."""
    return dict((summary.get("extraction") or {}).get("metrics") or {})


def _section() -> type[Record]:
    from scoregate.tracks.extraction.section import ExtractionSection  # pydantic: only when a block is read

    return ExtractionSection


TRACK = Track(
    name="extraction",
    kind=KIND,
    report=_report,
    title="Extraction",
    headline=headline,
    label=labelled,
    report_view=extraction_view,
    section=_section,
)
