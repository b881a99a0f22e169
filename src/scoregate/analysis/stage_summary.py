"""Per-stage run metrics of a multi-stage pipeline: calls, failures, latency, tokens and cost of each stage."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scoregate.analysis.stats import percentiles
from scoregate.store.records import ItemResult
from scoregate.store.vocabulary import is_pipeline_call, stage_of


def stage_summary(results: Iterable[ItemResult], stages: list[str]) -> dict[str, Any]:
    """Return stage name → its model calls' count, failures, latency p50/p95/mean (uncached), tokens, cost.

    Tokens and cost are null when any of the stage's calls reported none (measured or null, never a partial sum).
    Judge calls of a stage's evaluators are not counted here (the telemetry rows have them).
    """
    acc: dict[str, dict[str, Any]] = {
        name: {"calls": 0, "failed_calls": 0, "latencies": [], "tokens_in": 0, "tokens_out": 0,
               "tokens_unknown": 0, "cost": 0.0, "cost_unknown": 0, "item_errors": 0}
        for name in stages
    }  # fmt: skip
    for result in results:
        for name, info in result.stages.items():
            if name in acc and info.get("error"):
                acc[name]["item_errors"] += 1
        for call in result.calls:
            stage = stage_of(call.purpose, stages[-1])
            if not is_pipeline_call(call.purpose) or stage not in acc:
                continue
            a = acc[stage]
            a["calls"] += 1
            a["failed_calls"] += call.error is not None
            if call.latency_ms is not None and not call.cached and call.error is None:
                a["latencies"].append(call.latency_ms)
            if call.tokens_in is None or call.tokens_out is None:
                a["tokens_unknown"] += 1
            else:
                a["tokens_in"] += call.tokens_in
                a["tokens_out"] += call.tokens_out
            if call.cost_usd is None:
                a["cost_unknown"] += 1
            else:
                a["cost"] += call.cost_usd
    out = {}
    for name, a in acc.items():
        lat = percentiles(a["latencies"], (50, 95))
        out[name] = {
            "calls": a["calls"],
            "failed_calls": a["failed_calls"],
            "item_errors": a["item_errors"],
            "latency_p50_ms": lat["p50"],
            "latency_p95_ms": lat["p95"],
            "latency_mean_ms": sum(a["latencies"]) / len(a["latencies"]) if a["latencies"] else None,
            "tokens_in_total": None if a["tokens_unknown"] else a["tokens_in"],
            "tokens_out_total": None if a["tokens_unknown"] else a["tokens_out"],
            "cost_usd_total": None if a["cost_unknown"] else round(a["cost"], 10),
        }
    return out


def stage_metrics(stages: dict[str, Any]) -> dict[str, float]:
    """Flatten per-stage metrics into MLflow metric names (`stage_<name>_<metric>`)."""
    metrics = {}
    for name, info in stages.items():
        for key, value in info.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                metrics[f"stage_{name}_{key}"] = float(value)
    return metrics
