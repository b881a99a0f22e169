"""Run-level extraction aggregates for summary.json: micro field metrics, EQS CI, performance, complexity, decision.

`extraction_run_summary` is the hook `summarize_run` calls: it re-scores each stored result (deterministic and
fast, so results.jsonl stays small), streams them through the library's ExtractionAggregator, and returns
`{"extraction": {...}}`, or `{}` when the run has no extraction evaluator.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from scoregate.analysis.stats import mean_ci, percentiles
from scoregate.scoring.base import Evaluator
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.tracks.base import ItemLedger, measured
from scoregate.tracks.extraction.decision import production_levels, summary_recommendation
from scoregate.tracks.extraction.kind import ExtractionEvaluator
from scoregate.tracks.extraction.metrics import ExtractionAggregate, ExtractionAggregator, ExtractionScores

if TYPE_CHECKING:
    from scoregate.store.record import Manifest


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho with its p-value, or nulls with the reason it is undefined."""
    n = len(x)
    if n < 3:
        return {"rho": None, "p_value": None, "n": n, "reason": f"{n} item(s): at least 3 are needed"}
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {"rho": None, "p_value": None, "n": n, "reason": "one side is constant"}
    from scipy import stats  # ~70 MB: every run's summary imports this module, only extraction runs get here

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho, p = stats.spearmanr(x, y)
    rho_f, p_f = float(rho), float(p)
    return {
        "rho": rho_f if math.isfinite(rho_f) else None,
        "p_value": p_f if math.isfinite(p_f) else None,
        "n": n,
        "reason": None,
    }


class ExtractionRunAggregator:
    """Folds stored item results into run-level extraction aggregates, one item at a time."""

    def __init__(self, evaluator: ExtractionEvaluator) -> None:
        self.evaluator = evaluator
        self.fields = ExtractionAggregator()
        self.items = 0
        self.ledger = ItemLedger()
        self.timeouts = 0
        self.retried = 0
        self.latencies: list[float] = []
        self.tokens_in: list[int] = []
        self.tokens_out: list[int] = []
        self.costs: list[float] = []
        self.usage_unknown = 0
        self.cost_unknown = 0
        self.predicted_fields = 0
        self.fields_tokens_out = 0
        # per scored item: (schema field count, schema depth, F1 partial, latency or NaN, complexity bin)
        self.per_item: list[tuple[float, float, float, float, str]] = []

    def add(self, result: ItemResult) -> None:
        """Count one stored result: a failed call, an unscorable reference, or a scored output."""
        self.items += 1
        task = result.task_call
        if task is not None and task.retries:
            self.retried += 1
        if task is None or task.error is not None:
            error = (task.error if task is not None else None) or result.error or "no task call recorded"
            self.timeouts += "timed out" in error
            self.ledger.failed(result.item_id, error)
            return
        latency = task.latency_ms if task.latency_ms is not None and not task.cached else math.nan
        if not math.isnan(latency):
            self.latencies.append(latency)
        if task.tokens_in is None or task.tokens_out is None:
            self.usage_unknown += 1
        else:
            self.tokens_in.append(task.tokens_in)
            self.tokens_out.append(task.tokens_out)
        if task.cost_usd is None:
            self.cost_unknown += 1
        else:
            self.costs.append(task.cost_usd)
        inputs = self.evaluator.inputs(result.input, result.expected_output, result.metadata)
        stored = result.score("eqs")
        # Scoring is deterministic: an item whose stored EQS was measured had a sound reference; check the others.
        problem = None if stored is not None and stored.value is not None else self.evaluator.problem(inputs)
        output = result.raw_output if result.raw_output is not None else result.output
        scores: ExtractionScores | None = None
        if problem is None:
            try:
                scores = self.evaluator.measure(output, inputs)
            except Exception as exc:  # a scoring bug must not lose the run's summary; the item is reported instead
                problem = f"scoring failed: {type(exc).__name__}: {exc}"
        if scores is None:
            self.ledger.not_scored(result.item_id, problem or "not scored")
            return
        self.fields.add(scores)
        predicted = scores.counts.predicted if scores.valid else 0
        if task.tokens_out is not None:
            self.predicted_fields += predicted
            self.fields_tokens_out += task.tokens_out
        complexity = scores.complexity
        if complexity is not None:
            f1 = scores.f1("partial")
            self.per_item.append(
                (float(complexity.total_fields), float(complexity.max_depth), f1, latency, complexity.bin)
            )

    def result(
        self,
        *,
        confidence: float = 0.95,
        resamples: int = 2000,
        seed: int = 0,
        wall_seconds: float | None = None,
    ) -> dict[str, Any]:
        """Return the run-level extraction report (JSON-ready)."""
        agg = self.fields.result()
        eqs = np.asarray(agg.eqs_values, dtype=float)
        low = high = method = None
        if eqs.size:
            low, high, method = mean_ci(eqs, confidence=confidence, resamples=resamples, seed=seed)
        detail = agg.to_dict()
        return {
            "evaluator": f"{self.evaluator.name}@{self.evaluator.version}",
            "items": self.items,
            "scored": agg.items,
            "not_scored": {
                "model_call_failed": self.ledger.call_failure_count,
                "reference_problem": self.ledger.unscored_count,
            },
            "unscored_references": self.ledger.unscored,
            "failed_calls": self.ledger.call_failures,
            "aggregation": "micro over fields for precision/recall/F1, hallucination and omission; macro for EQS",
            "metrics": (metrics := detail.pop("metrics")),
            "null_reasons": (reasons := detail.pop("null_reasons")),
            "metrics_measured": {
                key: measured(value, reasons.get(key), samples_measured=agg.items, samples_total=self.items)
                for key, value in metrics.items()
            },
            "eqs_ci": {
                "mean": float(eqs.mean()) if eqs.size else None,
                "ci_low": low,
                "ci_high": high,
                "confidence": confidence,
                "method": method,
                "n": int(eqs.size),
            },
            "fields": detail,
            "performance": self._performance(agg, wall_seconds),
            "complexity_analysis": self._complexity(agg),
        }

    def _performance(self, agg: ExtractionAggregate, wall_seconds: float | None) -> dict[str, Any]:
        lat = percentiles(self.latencies, (50, 95, 99))
        replies = self.items - self.ledger.call_failure_count
        reasons: dict[str, str] = {}
        if not self.latencies:
            reasons["latency"] = "no uncached successful task call"
        if wall_seconds is None:
            reasons["throughput"] = "the run's wall time is unknown (unfinished, or resumed after a pause)"
        if self.usage_unknown:
            reasons["tokens"] = f"{self.usage_unknown} call(s) reported no usage"
        if self.cost_unknown:
            reasons["cost"] = f"{self.cost_unknown} call(s) have no known price (set input/output_cost_per_mtok)"
        tokens_known = not self.usage_unknown and bool(self.tokens_out)
        cost_known = not self.cost_unknown and bool(self.costs)
        return {
            "latency_mean_ms": float(np.mean(self.latencies)) if self.latencies else None,
            "latency_p50_ms": lat["p50"],
            "latency_p95_ms": lat["p95"],
            "latency_p99_ms": lat["p99"],
            "throughput_items_per_s": _ratio(self.items, wall_seconds) if wall_seconds else None,
            "tokens_in_mean": float(np.mean(self.tokens_in)) if tokens_known else None,
            "tokens_out_mean": float(np.mean(self.tokens_out)) if tokens_known else None,
            "tokens_in_total": int(sum(self.tokens_in)) if tokens_known else None,
            "tokens_out_total": int(sum(self.tokens_out)) if tokens_known else None,
            "fields_per_output_token": _ratio(self.predicted_fields, self.fields_tokens_out),
            "cost_usd_total": float(sum(self.costs)) if cost_known else None,
            "cost_usd_per_item": float(np.mean(self.costs)) if cost_known else None,
            "request_success_rate": _ratio(replies, self.items),
            "valid_output_rate": _ratio(replies - agg.parse_failures - agg.schema_failures, self.items),
            "parse_failure_rate": _ratio(agg.parse_failures, agg.items),
            "schema_failure_rate": _ratio(agg.schema_failures, agg.items),
            "timeout_rate": _ratio(self.timeouts, self.items),
            "retry_rate": _ratio(self.retried, self.items),
            "null_reasons": reasons,
        }

    def _complexity(self, agg: ExtractionAggregate) -> dict[str, Any]:
        bins: dict[str, list[tuple[float, float, float, float, str]]] = {}
        for row in self.per_item:
            bins.setdefault(row[4], []).append(row)
        by_bin = {}
        counts = agg.breakdowns.get("complexity", {})
        for name, rows in sorted(bins.items()):
            lat = [r[3] for r in rows if not math.isnan(r[3])]
            c = counts.get(name)
            by_bin[name] = {
                "items": len(rows),
                "field_f1_partial_micro": c.f1("partial") if c is not None else None,
                "field_f1_partial_mean": float(np.mean([r[2] for r in rows])),
                "latency_mean_ms": float(np.mean(lat)) if lat else None,
                "latency_p95_ms": percentiles(lat, (95,))["p95"],
            }
        with_latency = [r for r in self.per_item if not math.isnan(r[3])]
        return {
            "bins": by_bin,
            "correlations": {
                "f1_vs_field_count": _spearman([r[0] for r in self.per_item], [r[2] for r in self.per_item]),
                "f1_vs_depth": _spearman([r[1] for r in self.per_item], [r[2] for r in self.per_item]),
                "latency_vs_field_count": _spearman([r[0] for r in with_latency], [r[3] for r in with_latency]),
                "latency_vs_depth": _spearman([r[1] for r in with_latency], [r[3] for r in with_latency]),
            },
            "method": "Spearman rank correlation over scored items with a schema",
        }


def _wall_seconds(manifest: Manifest) -> float | None:
    started, finished = manifest.started_at, manifest.finished_at
    if not started or not finished or manifest.resumed_at:
        return None
    return (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()


def aggregate_results(
    evaluator: ExtractionEvaluator,
    results: Iterable[ItemResult],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    wall_seconds: float | None = None,
) -> dict[str, Any]:
    """Return the run-level extraction report of stored results (without levels and recommendation)."""
    aggregator = ExtractionRunAggregator(evaluator)
    for result in results:
        aggregator.add(result)
    return aggregator.result(confidence=confidence, resamples=resamples, seed=seed, wall_seconds=wall_seconds)


def extraction_run_summary(
    evaluators: Sequence[Evaluator],
    store: RunStore,
    summary: Mapping[str, Any],
    *,
    min_coverage: float = 0.8,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Return `{"extraction": report}` for a run with an extraction evaluator (the first one), else `{}`.

    The report holds the micro field metrics, the EQS bootstrap CI, performance, complexity analysis, the
    production levels judged on `summary` (its per-item score means and run metrics) and the recommendation.
    """
    extractor = next((e for e in evaluators if isinstance(e, ExtractionEvaluator)), None)
    if extractor is None:
        return {}
    report = aggregate_results(
        extractor,
        store.iter_results(),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        wall_seconds=_wall_seconds(store.manifest_record),
    )
    report.update(production_levels(summary, min_coverage=min_coverage))
    report["recommendation"] = summary_recommendation(summary).to_dict()
    return {"extraction": report}


def extraction_track_report(
    evaluators: Sequence[Evaluator], store: RunStore, summary: Mapping[str, Any], settings: Any
) -> dict[str, Any]:
    """The extraction track's hook in the track contract (see scoregate.tracks.base)."""
    return extraction_run_summary(
        evaluators, store, summary, min_coverage=settings.min_coverage, confidence=settings.confidence,
        resamples=settings.resamples, seed=settings.seed,
    )  # fmt: skip
