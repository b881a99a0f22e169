"""The tracks (built-ins, one line each, and plug-ins) and what the rest of scoregate asks them: kinds, run blocks,
gate metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from scoregate.analysis.track_metrics import TrackMetrics
from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorKinds, EvaluatorSpec
from scoregate.scoring.base import Evaluator
from scoregate.scoring.kinds import registry as scoring_kinds
from scoregate.store.run_store import RunStore
from scoregate.support.registry import Plugin, PluginError, Registry
from scoregate.tracks import listing
from scoregate.tracks.base import Track, TrackSettings

if TYPE_CHECKING:
    from scoregate.store.record import RunSummary
    from scoregate.store.record_base import Record


def _built_in_tracks() -> dict[str, Track]:
    """Each package of `tracks/listing.py`'s list, by its track's name (a package is imported once)."""
    found = (import_module(f"{package}.track").TRACK for package in listing.TRACK_PACKAGES)
    return {track.name: track for track in found}


def _adopt_track(loaded: object, plugin: Plugin) -> Track:
    """A plug-in's `Track`, once its name is found to be the entry point's."""
    if not isinstance(loaded, Track):
        raise ValueError(f"is a {type(loaded).__name__}, not a scoregate.tracks.base.Track")
    if loaded.name != plugin.name:
        raise ValueError(f"is the track {loaded.name!r}: name the entry point {loaded.name!r}")
    built_in_kinds = {kind.name for kind in scoring_kinds.KINDS} | {t.kind.name for t in _built_in_tracks().values()}
    if loaded.kind.name in built_in_kinds:
        raise ValueError(f"brings the evaluator kind {loaded.kind.name!r}, which is scoregate's built-in kind")
    return loaded


TRACKS: Registry[Track] = Registry("scoregate.tracks", "track", _built_in_tracks, _adopt_track)
"""Every track: `tracks/listing.py`'s (a folder `tracks/<name>/` and a line there), then the plug-ins of the
entry-point group `scoregate.tracks`."""


def all_tracks() -> list[Track]:
    """Every track, the built-ins in `tracks/listing.py`'s order, then the plug-ins by name."""
    return list(TRACKS.entries().values())


def _built_in_kinds() -> dict[str, EvaluatorKind[Any]]:
    """Scoring's kinds, then each track's; two tracks that bring one kind are a PluginError naming both packages."""
    kinds: dict[str, EvaluatorKind[Any]] = {kind.name: kind for kind in scoring_kinds.KINDS}
    brought: dict[str, str] = {}
    for track in all_tracks():
        name = track.kind.name
        if name in brought:
            raise PluginError(
                f"two tracks bring the evaluator kind {name!r}: {brought[name]!r} and {track.name!r} "
                f"(packages {TRACKS.distribution(brought[name])!r} and {TRACKS.distribution(track.name)!r})",
                hint="uninstall one of them, or rename the kind in one",
            )
        brought[name] = track.name
        kinds[name] = track.kind
    return kinds


SPEC_ANSWERS = ("score_keys", "directions")
"""What a kind's spec must define itself: EvaluatorSpec's own versions only raise."""


def _adopt_kind(loaded: object, plugin: Plugin) -> EvaluatorKind[Any]:
    """A plug-in's `EvaluatorKind`, once its name and its spec's `kind: Literal[...]` are found to match."""
    if not isinstance(loaded, EvaluatorKind):
        raise ValueError(f"is a {type(loaded).__name__}, not a scoregate.catalog.evaluators.EvaluatorKind")
    if loaded.name != plugin.name:
        raise ValueError(f"is the kind {loaded.name!r}: name the entry point {loaded.name!r}")
    spec = loaded.spec
    field = spec.model_fields.get("kind") if isinstance(spec, type) and issubclass(spec, EvaluatorSpec) else None
    if field is None or get_origin(field.annotation) is not Literal or get_args(field.annotation) != (plugin.name,):
        raise ValueError(f"needs a spec: an EvaluatorSpec subclass with `kind: Literal[{plugin.name!r}]`")
    unanswered = [m for m in SPEC_ANSWERS if getattr(spec, m) is getattr(EvaluatorSpec, m)]
    if unanswered:
        raise ValueError(
            "needs a spec that says which scores it writes and which way they improve: define " + ", ".join(unanswered)
        )
    return loaded


KINDS: Registry[EvaluatorKind[Any]] = Registry("scoregate.kinds", "evaluator kind", _built_in_kinds, _adopt_kind)
"""Scoring's kinds, each track's, then the plug-ins of the entry-point group `scoregate.kinds`."""


@cache
def evaluator_kinds() -> EvaluatorKinds:
    """Every evaluator kind a project file may name: scoring's kinds, each track's, then the plug-ins'."""
    return EvaluatorKinds(KINDS.entries().values())


def build_evaluator(spec: Any, *, default_judge_model: str | None) -> Evaluator:
    """Return the evaluator of an evaluator file's spec (see `EvaluatorKinds.build`)."""
    evaluator: Evaluator = evaluator_kinds().build(spec, default_judge_model=default_judge_model)
    return evaluator


def track_reports(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: TrackSettings
) -> dict[str, Any]:
    """Return every track block of a run (`{}` when it has no track evaluator)."""
    blocks: dict[str, Any] = {}
    for track in all_tracks():
        blocks.update(track.report(evaluators, store, summary, settings))
    return blocks


def take_gate_metrics(blocks: dict[str, Any]) -> dict[str, Any]:
    """Take the run-level metrics every track block offers to gates out of the blocks, by name."""
    found: dict[str, Any] = {}
    for block in blocks.values():
        if isinstance(block, dict):
            found.update(block.pop("gate_metrics", None) or {})
    return found


def headline_metrics(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Track name → its run-level metrics in a summary.json, by key (only the tracks the run has)."""
    return {track.name: found for track in all_tracks() if (found := track.headline(summary))}


def track_section(store: RunStore, summary: RunSummary, track: Track) -> Record | None:
    """The track's block of the run's summary.json read through the track's model (plain data without one), or None
    when the run has none; a block the model cannot read is a DamagedRun naming the file and the field."""
    from scoregate.store.record_base import Record
    from scoregate.store.record_files import read_section
    from scoregate.store.run_files import SUMMARY

    model = track.section() if track.section is not None else Record
    return read_section(summary, track.name, model, store.directory / SUMMARY)


def ranked_metrics() -> list[TrackMetrics]:
    """What a ranking compares of each track beside the per-item scores: its run-level metrics and their labels."""
    return [TrackMetrics(track.name, track.headline, track.label) for track in all_tracks()]
