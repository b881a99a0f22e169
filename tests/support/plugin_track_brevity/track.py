"""The brevity track as the registry knows it: its kind, its run block (words per reply, pooled) and headline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoregate.scoring.base import Evaluator
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import Track, TrackSettings, measured
from support.plugin_track_brevity.kind import KEY, KIND, RUN_KEY, BrevityEvaluator


def report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    """`{"brevity": block}` for a run with a brevity evaluator: all words over all measured replies."""
    if not any(isinstance(e, BrevityEvaluator) for e in evaluators):
        return {}
    counts = [s.value for r in store.iter_results() for s in r.scores if s.name == KEY and s.value is not None]
    total = sum(1 for _ in store.iter_results())
    value = sum(float(c) for c in counts) / len(counts) if counts else None
    metric = measured(value, "no reply was measured", samples_measured=len(counts), samples_total=total)
    gate = {**metric, "data_type": "numeric", "mean": value, "n_total": total, "n_measured": len(counts)}
    return {"brevity": {"metrics": {"words_per_reply": value}, "gate_metrics": {RUN_KEY: gate}}}


def headline(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The run-level words per reply, for MLflow and rankings."""
    return dict((summary.get("brevity") or {}).get("metrics") or {})


TRACK = Track(name="brevity", kind=KIND, report=report, title="Brevity", headline=headline)
