"""The semantic tags track as the registry knows it: its kind and its run block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scoregate.tracks.base import Track, TrackSettings
from scoregate.tracks.tags.spec import KIND

if TYPE_CHECKING:
    from scoregate.scoring.base import Evaluator
    from scoregate.store.record_base import Record
    from scoregate.store.run_store import RunStore


def _report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    if not any(type(e).__module__ == "scoregate.tracks.tags.kind" for e in evaluators):
        return {}  # no TagsEvaluator in the run: its summary code is not even imported
    from scoregate.tracks.tags.run_summary import tags_track_report

    return tags_track_report(evaluators, store, summary, settings)


def _schemas() -> dict[str, dict[str, Any]]:
    from scoregate.tracks.tags.gold import GOLD_SCHEMA, SCHEMA_FILE  # the gold-label files

    return {SCHEMA_FILE: GOLD_SCHEMA}


def _section() -> type[Record]:
    from scoregate.tracks.tags.section import TagsSection  # pydantic: only when a block is read

    return TagsSection


TRACK = Track(name="tags", kind=KIND, report=_report, title="Semantic tags", schemas=_schemas, section=_section)
