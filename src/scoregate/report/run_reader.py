"""One run as the HTML report reads it: its header, score order and gates, and its items' rows as they stream
past, with long texts clipped to the report's budget (a clipped text says so and where the full text is)."""

from __future__ import annotations

import difflib
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoregate.analysis.columns import FloatColumn
from scoregate.analysis.compare_runs import gate_directions
from scoregate.analysis.items import fact_groups
from scoregate.analysis.model_ranking import lower_is_better
from scoregate.analysis.regression import REGRESSION_STAT as PAIRED_STAT
from scoregate.analysis.run_source import recorded_gates
from scoregate.errors import ScoregateError
from scoregate.report.live_judges_view import live_judge_rows
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.store.stop_record import stop_line
from scoregate.tracks.registry import all_tracks, track_section

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.tracks.base import Track

TEXT_BUDGET = 6_000_000
"""Characters of item text (inputs, outputs, references, judge reasoning) one report embeds at most."""
MIN_CLIP, MAX_CLIP = 200, 20_000
MAX_ITEMS = 10_000
"""The item table's size: a 10,000-item page is ~12 MB; larger runs list their first 10,000 items."""
NUMERIC = ("numeric", "boolean")
OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}  # fmt: skip


@dataclass(frozen=True)
class ReportOptions:
    """Statistics settings for the comparison/ranking parts (the project's, when a project is known)."""

    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    metric: str | None = None
    """The score that ranks several runs; default `eqs` when every run has it, else the first gated score."""
    directions: Mapping[str, Any] | None = None
    """Score key → higher/lower/none from the evaluator files, as `compare` and `rank` use them."""
    scales: Mapping[str, tuple[float, float]] | None = None
    """Score key → the range its evaluator file declares (a judge's 1-5): its histogram shows every value."""
    text_budget: int = TEXT_BUDGET
    max_items: int = MAX_ITEMS
    """Items the table holds (the first by dataset position); every item counts in the charts and gates."""
    min_coverage: float = 0.8
    """The leaderboard's coverage flag: an entry covering less of the dataset is not comparable."""
    corrected: Mapping[str, Mapping[str, Any]] | None = None
    """Score → its corrected paired difference (`compare --estimate corrected`), shown beside the comparison's Δ."""


class Clipper:
    """Clips long strings in nested values to `limit` characters, counting what it cut."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.clipped = 0

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            if len(value) <= self.limit:
                return value
            self.clipped += 1
            return value[: self.limit] + f" …[+{len(value) - self.limit:,} chars]"
        if isinstance(value, dict):
            return {str(k): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value


def _index(table: dict[Any, int], key: Any) -> int:
    """The position of `key` in an interning table, adding it when new."""
    return table.setdefault(key, len(table))


def _trim(row: list[Any]) -> list[Any]:
    """Drop trailing nulls (the page reads a missing cell as null): most scores have no reason or comment."""
    while row and row[-1] is None:
        row.pop()
    return row


def _short(value: Any) -> Any:
    """A float to 6 significant digits (the page shows 3); anything else unchanged."""
    if isinstance(value, float) and not isinstance(value, bool):
        return float(f"{value:.6g}") if math.isfinite(value) else None
    return value


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _words(value: Any) -> list[str]:
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return text.split()[:2000]


def change_fraction(a: Any, b: Any) -> float:
    """Return how much of two outputs differs, word by word: 0 identical, 1 nothing shared."""
    wa, wb = _words(a), _words(b)
    if wa == wb:
        return 0.0
    return 1.0 - difflib.SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def direction_of(name: str, manifest: Manifest) -> str | None:
    """`lower` when a gate bounds the metric from above or its name says smaller is better, `higher` when a gate
    bounds it from below, else None (not known: a word count is neither better high nor low)."""
    if name in gate_directions([manifest]) or lower_is_better(name):
        return "lower"
    if any(g.get("metric") == name and g.get("op") in (">=", ">") for g in recorded_gates(manifest.receipts)):
        return "higher"
    return None


def verdict_words(summary: RunSummary) -> str:
    """The run's verdict in words: the gates that failed and, apart, the gates that could not be judged."""
    gates, verdict = summary.gates, summary.verdict
    failed = [g.name for g in gates if g.status == "fail"]
    open_ = [g.name for g in gates if g.status == "incomplete"]
    not_judged = f"{len(open_)} of {len(gates)} gate(s) could not be judged: {', '.join(open_)}"
    if verdict == "pass":
        kept = summary.quarantine_note()
        return f"PASS — all {len(gates)} gate(s) passed" + (f", with flaky items kept out: {kept}" if kept else "")
    if verdict == "fail":
        words = f"FAIL — {len(failed)} of {len(gates)} gate(s) failed: {', '.join(failed)}"
        return words + (f"; {not_judged}" if open_ else "")
    if verdict == "incomplete":
        return f"INCOMPLETE — {not_judged}"
    return "NO GATES — this experiment sets none, so there is no verdict"


def _shown(name: str, value: Any, comment: str | None, facts: dict[str, list[dict[str, Any]]]) -> tuple[Any, Any]:
    """A score's value and comment for the score table; the facts, listed below it, are not repeated there:
    a facts score shows how many facts each verdict has, its fact-recall score the first line of its comment."""
    if name in facts:
        return " · ".join(f"{g['title']} {len(g['facts'])}" for g in facts[name]), comment
    if name + "_facts" in facts and comment:
        return value, comment.splitlines()[0]
    return value, comment


def _item_breaks(gate: dict[str, Any], result: ItemResult, latency: float | None) -> bool:
    """True when this item's own value breaks the gate's rule (judged only where an item has such a value)."""
    compare = OPS.get(str(gate.get("op")))
    if compare is None or gate.get("stat") == PAIRED_STAT:  # a paired gate's rule reads the mean difference
        return False
    metric = str(gate.get("metric"))
    if metric in ("success_rate", "error_count"):
        return result.error is not None
    if metric.startswith("latency_"):
        return latency is not None and not compare(latency, float(gate["threshold"]))
    score = result.score(metric)
    value = _number(score.value) if score is not None else None
    return value is not None and not compare(value, float(gate["threshold"]))


class RunReader:
    """One run's header, score order and gates, and its items' rows as they stream past."""

    def __init__(self, store: RunStore, clip: Clipper, options: ReportOptions) -> None:
        self.directions = options.directions or {}
        self.scales = options.scales or {}
        self.store = store
        self.manifest = store.manifest_record
        summary = store.summary_record
        if summary is None:
            raise ScoregateError(
                f"run {store.run_id} has no summary.json: it did not finish",
                hint=f"resume it with `scoregate run --resume {store.run_id}`, then make its report",
            )
        self.summary: RunSummary = summary
        self.clip = clip
        self.gates: list[dict[str, Any]] = [
            dict(g.to_dict(), broken=0, broken_ids=[], verdict=g.verdict_words(upper=True)) for g in summary.gates
        ]
        scores = summary.scores
        gated = [str(g.metric) for g in summary.gates if g.metric in scores]
        self.order = list(dict.fromkeys([*gated, *scores]))
        self.values = {k: FloatColumn() for k in self.order if scores[k].data_type in NUMERIC}
        """The charts' values: 9 bytes an item and score (a float and a measured flag), every item of the run."""
        self.latencies = FloatColumn()
        self.costs = FloatColumn()
        self.keys: dict[tuple[str, str], int] = {}
        """(score name, evaluator) → its index in the run's key table; item rows name scores by index."""
        self.purposes: dict[str, int] = {}
        self.models: dict[str, int] = {}
        self.items = 0

    def row(self, result: ItemResult, *, keep: bool = True) -> dict[str, Any] | None:
        """Count the item's values and gates; return its per-run row (output, error, scores, calls, gates broken)
        when `keep`, else None (its values still count in the distributions and gates)."""
        self.items += 1
        task = result.task_call
        latency = task.latency_ms if task is not None and not task.cached and task.error is None else None
        self.latencies.append(latency)
        known = [c.cost_usd for c in result.calls if c.cost_usd is not None]
        self.costs.append(sum(known) if known else None)
        by_name = {s.name: s for s in result.scores}
        for key, column in self.values.items():
            score = by_name.get(key)
            column.append(_number(score.value) if score is not None else None)
        broken = []
        for index, gate in enumerate(self.gates):
            if _item_breaks(gate, result, latency):
                broken.append(index)
                gate["broken"] += 1
                if len(gate["broken_ids"]) < 50:
                    gate["broken_ids"].append(result.item_id)
        if not keep:
            return None
        clip = self.clip
        facts = {s.name: groups for s in result.scores if (groups := fact_groups(s.value)) is not None}
        scores = [
            _trim([_index(self.keys, (s.name, s.evaluator)), clip(_short(value)), clip(s.reason), clip(comment)])
            for s in result.scores
            for value, comment in [_shown(s.name, s.value, s.comment, facts)]
        ]  # fmt: skip
        calls = [
            _trim([_index(self.purposes, c.purpose), _index(self.models, c.model), _short(c.latency_ms),
                   c.tokens_in, c.tokens_out, _short(c.cost_usd), c.retries, int(c.cached), clip(c.error)])
            for c in result.calls
        ]  # fmt: skip
        return {
            "p": result.prompt,
            "o": clip(result.output if result.output is not None else result.raw_output),
            "e": clip(result.error),
            "s": scores,
            "c": calls,
            "g": broken,
            "l": _short(latency),
            **({"f": clip(facts)} if facts else {}),
        }

    def _track_view(self, track: Track) -> dict[str, Any] | None:
        """What the report shows of the run's block of `track`, read through the track's model; None: no section."""
        block = track_section(self.store, self.summary, track)
        return track.report_view(block.to_dict() if block is not None else None)

    def header(self) -> dict[str, Any]:
        """Return the run's identity, verdict, ordered score statistics, gates and run metrics (after the rows:
        `items` counts the items the run holds, of the dataset's `dataset_items`, `limit` its `--limit`)."""
        s, r = self.summary, self.manifest.receipts
        dataset, model = r.dataset, r.model
        scores = []
        for key in self.order:
            stats = s.scores[key].to_dict()
            stats["name"] = key
            known = self.directions.get(key)  # the evaluator file's direction, as compare and rank use it
            stats["direction"] = (
                direction_of(key, self.manifest) if known is None else (None if known == "none" else known)
            )
            stats["gated"] = any(g.get("metric") == key for g in self.gates)
            scale = (0.0, 1.0) if stats.get("data_type") == "boolean" else self.scales.get(key)
            stats["scale"] = list(scale) if scale is not None else None
            scores.append(stats)
        return {
            "run_id": self.store.run_id,
            "experiment": s.experiment or r.experiment,
            "project": r.project,
            "model": s.model or (model.name if model else None),
            "model_id": model.model if model else None,
            "endpoint": model.endpoint if model else None,
            "judge_model": r.judge_model.model if r.judge_model else None,
            "prompts": {n: str(version) for n, version in r.prompt_versions().items()},
            "dataset": (dataset.name if dataset else None) or s.dataset,
            "dataset_hash": dataset.content_hash if dataset else None,
            "dataset_items": dataset.items if dataset else None,
            "items": self.items,
            "limit": self.manifest.options.limit,
            "started_at": self.manifest.started_at,
            "finished_at": self.manifest.finished_at,
            "status": self.manifest.status,
            "tool_version": r.tool_version,
            "git_commit": r.git_commit(),
            "verdict": s.verdict,
            "verdict_words": verdict_words(s),
            "stop_early": stop_line(stop) if (stop := s.stop_early) is not None else None,
            "scores": scores,
            "gates": self.gates,
            "flaky": s.flaky.to_dict() if s.flaky is not None else None,
            "judge_drift": s.section("judge_drift"),
            "cascade": {name: block.to_dict() for name, block in (s.cascade or {}).items()},
            "live_judges": live_judge_rows(self.store.directory.parent.parent, self.store.run_id),
            "run_metrics": s.run_metrics.to_dict(),
            "tracks": {t.name: view for t in all_tracks() if (view := self._track_view(t)) is not None},
            "score_keys": [list(key) for key in self.keys],
            "purposes": list(self.purposes),
            "models": list(self.models),
        }
