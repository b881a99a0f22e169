"""Aggregate a run's stored results into per-score statistics and run metrics (streaming over items)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scoregate.analysis.columns import FloatColumn
from scoregate.analysis.stats import describe, percentiles
from scoregate.store.records import DataType, ItemResult

TOP_REASONS = 5


@dataclass
class _ScoreColumn:
    data_type: DataType
    values: FloatColumn = field(default_factory=FloatColumn)
    categories: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)


@dataclass
class _RunTotals:
    items: int = 0
    failed: int = 0
    with_expected: int = 0
    latencies: FloatColumn = field(default_factory=FloatColumn)
    task_calls: int = 0
    cached_task_calls: int = 0
    cached_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_in_cached: int = 0
    tokens_out_cached: int = 0
    tokens_unknown: int = 0
    cost: float = 0.0
    cost_unknown: int = 0
    calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    items_call_failed: int = 0
    scores_null_call_failed: int = 0


def _as_number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


def _integrity(stats: dict[str, Any], column: _ScoreColumn) -> dict[str, Any]:
    """The measured-or-null fields every summary metric carries: value, reason, coverage, samples measured/skipped."""
    measured = stats.get("n_measured") or 0
    total = stats.get("n_total") or 0
    if column.data_type == "categorical":
        value: Any = column.categories.most_common(1)[0][0] if column.categories else None
    elif column.data_type == "text":
        value = None
    else:
        value = stats.get("mean")
    reason = None
    if value is None:
        if column.data_type == "text":
            reason = "text score: no aggregate value (read each item's text)"
        elif column.reasons:
            reason = column.reasons.most_common(1)[0][0]
        else:
            reason = "no item measured" if total else "no items"
    return {
        "value": value,
        "reason": reason,
        "coverage": stats.get("coverage"),
        "samples_measured": measured,
        "samples_skipped": total - measured,
    }


class RunAggregator:
    """Collects score columns and telemetry one item at a time; memory grows by a float per score per item
    (a `FloatColumn`: 9 bytes) and the item's id."""

    def __init__(self, score_keys: Iterable[tuple[str, DataType]]) -> None:
        self._columns = {key: _ScoreColumn(data_type) for key, data_type in score_keys}
        self._totals = _RunTotals()
        self.item_ids: list[str] = []
        """Item ids in the order they were added (aligned with every `column`)."""

    def add(self, result: ItemResult) -> None:
        """Count one item's scores and calls."""
        t = self._totals
        t.items += 1
        self.item_ids.append(result.item_id)
        t.failed += result.error is not None
        t.with_expected += result.expected_output is not None
        if result.error is None and result.failed_calls:  # an output, but a judge or stage could not be asked
            t.items_call_failed += 1
            t.scores_null_call_failed += sum(s.value is None for s in result.scores)
        by_name = {s.name: s for s in result.scores}
        for key, column in self._columns.items():
            score = by_name.get(key)
            if score is None:
                column.values.append(None)
                column.reasons["not produced by its evaluator"] += 1
                continue
            if score.value is None:
                column.reasons[score.reason or "no reason given"] += 1
            if column.data_type == "categorical" and score.value is not None:
                column.categories[str(score.value)] += 1
            if column.data_type in ("text", "categorical"):  # no mean: the column only marks what was measured
                column.values.append(None if score.value is None else 1.0)
            else:
                column.values.append(_as_number(score.value))
        for call in result.calls:
            t.calls += 1
            t.task_calls += call.purpose == "task"
            t.retries += call.retries
            if call.error is not None:
                t.failed_calls += 1
                continue
            if call.purpose == "task":
                if call.cached:
                    t.cached_task_calls += 1
                else:
                    t.latencies.append(call.latency_ms)
            if call.tokens_in is None or call.tokens_out is None:
                t.tokens_unknown += 1
            else:
                t.tokens_in += call.tokens_in
                t.tokens_out += call.tokens_out
                if call.cached:  # counted in the totals (the answer used them), but not spent by this run
                    t.tokens_in_cached += call.tokens_in
                    t.tokens_out_cached += call.tokens_out
            t.cached_calls += call.cached
            if call.cost_usd is None:
                t.cost_unknown += 1
            else:
                t.cost += call.cost_usd

    def has_column(self, key: str) -> bool:
        """True when `key` is a per-item score column of this run."""
        return key in self._columns

    def column(self, key: str) -> FloatColumn:
        """Return one score's per-item values in the order items were added (None = not measured)."""
        return self._columns[key].values

    def summary(self, *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
        """Return per-score statistics and run metrics as a JSON-ready dict."""
        scores: dict[str, Any] = {}
        for key, column in self._columns.items():
            if column.data_type in ("text", "categorical"):
                measured = len(column.values.measured())
                stats: dict[str, Any] = {
                    "n_total": len(column.values),
                    "n_measured": measured,
                    "coverage": measured / len(column.values) if column.values else None,
                }
            else:
                stats = describe(column.values, confidence=confidence, resamples=resamples, seed=seed).to_dict()
            stats["data_type"] = column.data_type
            if column.categories:
                stats["categories"] = dict(column.categories.most_common())
            stats["null_reasons"] = dict(column.reasons.most_common(TOP_REASONS))
            scores[key] = {**stats, **_integrity(stats, column)}
        return {"scores": scores, "run_metrics": self._run_metrics(), "coverage": self._coverage()}

    def _coverage(self) -> dict[str, Any]:
        """The run's coverage block: samples in total, with a reference (gold) output, and with an output."""
        t = self._totals
        return {
            "samples_total": t.items,
            "samples_with_output": t.items - t.failed,
            "samples_with_gold": t.with_expected,
            "gold_coverage": t.with_expected / t.items if t.items else None,
        }

    def _run_metrics(self) -> dict[str, Any]:
        t = self._totals
        lat = percentiles(t.latencies, (50, 95, 99))
        measured_latencies = t.latencies.measured()
        latency_mean = float(sum(measured_latencies)) / len(measured_latencies) if len(measured_latencies) else None
        metrics: dict[str, Any] = {
            "items": t.items,
            "error_count": t.failed,
            "success_rate": (t.items - t.failed) / t.items if t.items else None,
            "latency_p50_ms": lat["p50"],
            "latency_p95_ms": lat["p95"],
            "latency_p99_ms": lat["p99"],
            "latency_mean_ms": latency_mean,
            "task_calls": t.task_calls,
            "cached_task_calls": t.cached_task_calls,
            "calls": t.calls,
            "cached_calls": t.cached_calls,
            "failed_calls": t.failed_calls,
            "items_with_failed_calls": t.items_call_failed,
            "null_scores_in_items_with_failed_calls": t.scores_null_call_failed,
            "retries_total": t.retries,
            "tokens_in_total": t.tokens_in if not t.tokens_unknown else None,
            "tokens_out_total": t.tokens_out if not t.tokens_unknown else None,
            "tokens_in_cached": t.tokens_in_cached,
            "tokens_out_cached": t.tokens_out_cached,
            "cost_usd_total": t.cost if not t.cost_unknown else None,
        }
        reasons = {}
        if not len(measured_latencies):
            reasons["latency"] = "no uncached successful task call" if t.items else "no items"
        if t.tokens_unknown:
            reasons["tokens"] = f"{t.tokens_unknown} call(s) reported no usage"
        if t.cost_unknown:
            reasons["cost"] = f"{t.cost_unknown} call(s) have no known price (set input/output_cost_per_mtok)"
        metrics["null_reasons"] = reasons
        return metrics
