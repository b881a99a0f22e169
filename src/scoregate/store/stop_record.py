"""A stop-early run as its record says it: the `stopped_early` status, the summary's `stop_early` block in words,
and the flat fields every mirror records (`stop_fields`). The run itself: `scoregate.app.run.stop_early`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary
    from scoregate.store.sections import StopEarlySection

STOPPED_EARLY = "stopped_early"
"""The manifest status of a run the stop rule (or a cap) ended before its last item; `run --resume` continues it."""


def stop_line(block: StopEarlySection) -> str:
    """The summary's `stop_early` block in one line: where it stopped, why, the verdict and the sequence's bounds."""
    reason = block.stop_reason or "no paired difference"
    low, high = block.lower, block.upper
    corrected = block.corrected
    level = (
        1 - float(block.rule.alpha) if corrected is None else 1 - float(block.rule.alpha) - float(corrected["alpha"])
    )
    bounds = "no bounds" if low is None else f"{level:.0%} confidence sequence [{low:.3g}, {high:.3g}]"
    what = (
        "mean paired difference"
        if corrected is None
        else (
            f"corrected paired difference of pass rates (judge's Youden J in [{corrected['low']:.3g}, "
            f"{corrected['high']:.3g}], {corrected['labels']} labels)"
        )
    )
    return (
        f"{block.progress} ({reason}): {block.verdict} against run {block.against} on {block.metric} "
        f"(gate {block.gate}); {bounds} for the {what} over "
        f"{block.paired_differences or 0} item(s); items not run count as nothing"
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
    rule = record.rule
    params = {
        "stop_early.against": str(record.against), "stop_early.gate": str(record.gate),
        "stop_early.metric": str(record.metric), "stop_early.question": str(rule.question),
        "stop_early.margin": str(rule.margin), "stop_early.alpha": str(rule.alpha),
        "stop_early.method": str(rule.method), "stop_early.batch": str(record.batch),
        "stop_early.order_seed": str(record.order_seed), "stop_early.max_items": str(rule.max_items),
        "stop_early.max_cost": str(rule.max_cost),
    }  # fmt: skip
    if record.corrected is not None:  # the rule's alpha is then the run's share; the rest is the calibration set's
        youden = record.corrected
        params["stop_early.corrected"] = json.dumps(
            {"youden_low": youden["low"], "youden_high": youden["high"], "alpha": youden["alpha"],
             "labels": youden["labels"]}
        )  # fmt: skip
    block = summary.stop_early
    if block is None:
        items_run = record.decision.items_run if record.decision is not None else None
        was = f"stopped at {items_run} of {record.items}"
        return StopFields(params, {}, {"stop_early": f"continued to the full dataset after it {was}"})
    figures = {
        "items_run": block.items_run, "items_total": block.items_total, "paired_differences": block.paired_differences,
        "lower": block.lower, "upper": block.upper, "mean_difference": block.mean_difference,
    }  # fmt: skip
    metrics = {f"stop_early.{key}": float(value) for key, value in figures.items() if value is not None}
    tags = {
        "stop_early": str(block.progress),
        "stop_early.verdict": str(block.verdict),
        "stop_early.reason": str(block.stop_reason or "no paired difference"),
        "stop_early.summary": stop_line(block),
        "stop_early.rule": str(rule.rule),
        "stop_early.method_reference": str(rule.method_reference),
    }
    return StopFields(params, metrics, tags)
