"""Tracks: evaluator families with a run-level block in summary.json (`extraction`, `tags`, ...).

A track is one package, `tracks/<track>/`: its metrics in `metrics/` (pure functions), its evaluator file's spec
in `spec.py` and its evaluator in `kind.py`, its loaders, run summary and CLI sub-app beside them, and its `Track`
in `track.py`; `tracks/listing.py` lists the tracks' packages, one line each, and `tracks/registry.py` asks each
for its block.
The contract a track follows here is small:

- `report(evaluators, store, summary, settings)` returns `{block_key: report}` for a run holding the track's
  evaluator, else `{}`; it re-scores stored results (deterministic), so results.jsonl stays small;
- a report may carry `gate_metrics`: run-level values (micro averages) in the shape of a summary score
  (`mean`, `ci_low`, `ci_high`, `coverage`, ...) that `summarize_run` adds to `summary["scores"]` before the
  gates are judged, so a gate can name them;
- every metric it reports is `measured(...)`: value or null with a reason, coverage, samples measured and
  skipped (see `ItemLedger` for the failed and unscored items every track lists).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scoregate.catalog.evaluators import EvaluatorKind
from scoregate.scoring.base import Evaluator
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.store.record_base import Record

MAX_LISTED = 100
"""Items listed by id (unscorable, failed calls); beyond this only the count is kept."""


@dataclass(frozen=True, slots=True)
class TrackSettings:
    """The project settings a track report uses."""

    min_coverage: float = 0.8
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0


TrackReport = Callable[[Sequence[Evaluator], RunStore, Mapping[str, Any], TrackSettings], dict[str, Any]]


@dataclass(frozen=True)
class Track:
    """One track as the registry knows it: its evaluator kind and the hooks the run, report and ranking ask."""

    name: str
    kind: EvaluatorKind[Any]
    report: TrackReport
    """The run's block(s) in summary.json (see the module docstring); `{}` when the run has no such evaluator."""
    title: str
    """How the HTML report and the ranking name the track (e.g. "Extraction")."""
    headline: Callable[[Mapping[str, Any]], dict[str, Any]] = lambda summary: {}
    """summary.json → the track's run-level metrics a ranking compares (name → value); `{}` when it has none."""
    label: Callable[[str, Collection[str]], str] = lambda name, names: name
    """(metric, every metric a ranking shows) → how its tables name it (e.g. micro value vs per-item mean)."""
    report_view: Callable[[Mapping[str, Any] | None], dict[str, Any] | None] = lambda block: None
    """The run's block (summary.json[name]) → what the HTML report shows of it in the track's section (the form is
    in `tracks/extraction/report_view.py`), or None: no section."""
    schemas: Callable[[], dict[str, dict[str, Any]]] = dict
    """File name → JSON Schema of the track's own files (`make schemas` publishes them beside the project's)."""
    section: Callable[[], type[Record]] | None = None
    """The model of the track's block in summary.json (a `Record`), imported when a block is read
    (`tracks.registry.track_section`); None: the block is read as plain data."""


def measured(
    value: float | None,
    reason: str | None,
    *,
    samples_measured: int,
    samples_total: int,
    **extra: Any,
) -> dict[str, Any]:
    """One metric with its integrity fields: value, reason (when null), coverage, samples measured and skipped."""
    if value is None and not reason:
        reason = "not measured"
    return {
        "value": value,
        "reason": None if value is not None else reason,
        "coverage": samples_measured / samples_total if samples_total else None,
        "samples_measured": samples_measured,
        "samples_skipped": samples_total - samples_measured,
        **extra,
    }


def task_failure(result: ItemResult) -> str | None:
    """Why a stored result has no output to score (its task call failed), or None."""
    task = result.task_call
    if task is not None and task.error is None:
        return None
    if task is None and result.prompt == "expected_output" and result.error is None:  # output_from: expected_output
        return None
    return (task.error if task is not None else None) or result.error or "no task call recorded"


@dataclass
class ItemLedger:
    """The items a track could not score: failed task calls and unscorable items, counted, with ids (capped)."""

    items: int = 0
    call_failure_count: int = 0
    unscored_count: int = 0
    call_failures: list[dict[str, str]] = field(default_factory=list)
    unscored: list[dict[str, str]] = field(default_factory=list)

    def call_failed(self, result: ItemResult) -> bool:
        """Count one result; True (and recorded) when its task call failed, so it cannot be scored."""
        self.items += 1
        error = task_failure(result)
        if error is not None:
            self.failed(result.item_id, error)
        return error is not None

    def failed(self, item_id: str, error: str) -> None:
        """Record an item whose task call failed."""
        self.call_failure_count += 1
        if len(self.call_failures) < MAX_LISTED:
            self.call_failures.append({"item_id": item_id, "error": error})

    def not_scored(self, item_id: str, reason: str) -> None:
        """Record an item that reached the scorer but could not be scored."""
        self.unscored_count += 1
        if len(self.unscored) < MAX_LISTED:
            self.unscored.append({"item_id": item_id, "reason": reason})
