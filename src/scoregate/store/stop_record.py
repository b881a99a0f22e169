"""A stop-early run as its record says it: the `stopped_early` status, the summary's `stop_early` block in words,
and the flat fields every mirror records (`stop_fields`). The run itself: `scoregate.app.run.stop_early`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary

STOPPED_EARLY = "stopped_early"
"""The manifest status of a run the stop rule (or a cap) ended before its last item; `run --resume` continues it."""


def stop_line(block: Mapping[str, Any]) -> str:
    """The summary's `stop_early` block in one line: where it stopped, why, the verdict and the sequence's bounds."""
    reason = block.get("stop_reason") or "no paired difference"
    low, high = block.get("lower"), block.get("upper")
    alpha = float(block["rule"]["alpha"])
    bounds = "no bounds" if low is None else f"{1 - alpha:.0%} confidence sequence [{low:.3g}, {high:.3g}]"
    return (
        f"{block['progress']} ({reason}): {block['verdict']} against run {block['against']} on {block['metric']} "
        f"(gate {block['gate']}); {bounds} for the mean paired difference over "
        f"{block.get('paired_differences') or 0} item(s); items not run count as nothing"
    )


@dataclass(frozen=True)
class StopFields:
    """A stop-early run's record for a tracker: fixed parameters, figures and words."""

    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def stop_fields(manifest: Manifest, summary: RunSummary) -> StopFields:
    """Return what a mirror records of a stop-early run (nothing for an ordinary run).

    A stopped run continued to the full dataset (`run --resume`) keeps its parameters and says in its tags that
    it was continued: its summary is the full run's.
    """
    record = manifest.stop_early
    if not record:
        return StopFields()
    rule = record["rule"]
    params = {
        "stop_early.against": str(record["against"]), "stop_early.gate": str(record["gate"]),
        "stop_early.metric": str(record["metric"]), "stop_early.question": str(rule["question"]),
        "stop_early.margin": str(rule["margin"]), "stop_early.alpha": str(rule["alpha"]),
        "stop_early.method": str(rule["method"]), "stop_early.batch": str(record["batch"]),
        "stop_early.order_seed": str(record["order_seed"]), "stop_early.max_items": str(rule["max_items"]),
        "stop_early.max_cost": str(rule["max_cost"]),
    }  # fmt: skip
    block = summary.section("stop_early")
    if block is None:
        decision = record.get("decision") or {}
        was = f"stopped at {decision.get('items_run')} of {record['items']}"
        return StopFields(params, {}, {"stop_early": f"continued to the full dataset after it {was}"})
    metrics = {
        f"stop_early.{key}": float(block[key])
        for key in ("items_run", "items_total", "paired_differences", "lower", "upper", "mean_difference")
        if isinstance(block.get(key), int | float)
    }
    tags = {
        "stop_early": str(block["progress"]),
        "stop_early.verdict": str(block["verdict"]),
        "stop_early.reason": str(block.get("stop_reason") or "no paired difference"),
        "stop_early.summary": stop_line(block),
        "stop_early.rule": str(rule["rule"]),
        "stop_early.method_reference": str(rule["method_reference"]),
    }
    return StopFields(params, metrics, tags)
