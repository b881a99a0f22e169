"""A cascade judge in a run: how many items its first judge kept, its guarantee, and the cost saved, from the run's
telemetry. `cascade_blocks` makes summary.json's `cascade` block (the summary step); `cascade_report`, a post-run
step, prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scoregate.analysis.cascade import CascadeCost, cascade_cost
from scoregate.app.run.finished_run import FinishedRun
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec, as_llm_judge
from scoregate.store.run_store import RunStore
from scoregate.store.sections import CascadeJudgeRecord
from scoregate.support.console import lazy_console
from scoregate.support.terminal_text import print_wrapped

__all__ = ["CascadeRun", "cascade_blocks", "cascade_line", "cascade_report", "cascade_run"]

NOTHING_KEPT = "without a threshold nothing is kept: the first judge's calls only calibrate it"


@dataclass(frozen=True)
class CascadeRun:
    """One cascade judge in one run: the items it scored, those its first judge kept, and what that saved."""

    evaluator: str
    first_model: str
    threshold: float | None
    items: int
    kept: int
    cost: CascadeCost


def cascade_run(store: RunStore, spec: LlmJudgeSpec, threshold: float | None = None) -> CascadeRun:
    """Count, from a stored run's items and calls, what the cascade judge `spec` kept and what it saved (`threshold`:
    the one the run used, when the spec does not carry it)."""
    assert spec.cascade is not None
    first_model = spec.cascade.first_model
    purpose = f"judge:{spec.name}"
    first_key = spec.cascade_keys()[0]
    items = kept = strong_items = 0
    costs = {"first": 0.0, "strong": 0.0}
    priced = True
    for result in store.iter_results():
        if result.score(first_key) is None:
            continue
        items += 1
        calls = [c for c in result.calls if c.purpose == purpose]
        strong = [c for c in calls if c.model_name != first_model]
        strong_items += bool(strong)
        kept += not strong
        for call in calls:
            priced = priced and call.cost_usd is not None
            costs["first" if call.model_name == first_model else "strong"] += call.cost_usd or 0.0
    cost = cascade_cost(
        items=items,
        kept=kept,
        first_cost=costs["first"] if priced else None,
        strong_cost=costs["strong"] if priced else None,
        strong_items=strong_items,
    )
    used = spec.cascade.threshold if spec.cascade.threshold is not None else threshold
    return CascadeRun(spec.name, first_model, used, items, kept, cost)


def cascade_blocks(store: RunStore, plan: ExperimentPlan, project: Project) -> dict[str, dict[str, Any]]:
    """summary.json's `cascade` block: per cascade judge of the run, the guarantee it ran under, the share its first
    judge kept and the judge cost saved, each None with its reason when it cannot be computed."""
    from scoregate.app.cascade import saved_cascade

    blocks: dict[str, dict[str, Any]] = {}
    for spec in plan.evaluators.values():
        judge = as_llm_judge(spec)
        if judge is None or judge.cascade is None:
            continue
        saved = saved_cascade(project, judge, plan.judge_model_name)
        found = cascade_run(store, judge, saved.threshold)
        cost, cascade = found.cost, judge.cascade
        held = found.threshold is not None
        basis = None
        if held and found.kept == found.items and found.items and saved.strong_cost_per_item is not None:
            cost = _priced_by_calibration(cost, saved.strong_cost_per_item)
            basis = (
                "no item of this run went to the strong judge: its cost per item is the calibration's "
                f"(${saved.strong_cost_per_item:.6f}, runs {', '.join(saved.runs)})"
            )
        blocks[judge.name] = CascadeJudgeRecord(
            first_model=found.first_model,
            strong_model=judge.models_called(plan.judge_model_name)[0],
            threshold=found.threshold,
            target=cascade.target,
            delta=cascade.delta,
            guaranteed_level=cascade.target if held else None,
            guarantee=f"agreement >= {cascade.target:g} with probability {1 - cascade.delta:g}" if held else None,
            calibration_labels=saved.labels,
            items=found.items,
            kept=found.kept if held else 0,
            escalated=found.items - found.kept if held else found.items,
            share_kept=(found.kept / found.items if found.items else None) if held else None,
            first_cost_usd=cost.first_cost,
            strong_cost_usd=cost.strong_cost,
            cost_saved_usd=cost.saved if held else None,
            cost_saved_share=cost.saved_share if held else None,
            reason=None if held else (saved.reason or "no threshold holds for this judge version"),
            cost_reason=(cost.reason if cost.saved is None else None) if held else NOTHING_KEPT,
            cost_basis=basis,
        ).to_dict()
    return blocks


def _priced_by_calibration(cost: CascadeCost, strong_per_item: float) -> CascadeCost:
    """The cost saved of a run whose first judge kept every item, the strong judge priced as on the calibration."""
    if cost.first_cost is None:
        return cost
    alone = strong_per_item * cost.items
    saved = alone - cost.first_cost
    return CascadeCost(
        cost.items,
        cost.kept,
        cost.first_cost,
        cost.strong_cost,
        strong_per_item,
        saved,
        saved / alone if alone else None,
    )


def cascade_line(block: CascadeJudgeRecord) -> str:
    """The run's line for one cascade judge: what its first judge kept, under which guarantee, and what it saved."""
    if block.threshold is None:
        line = f"the strong judge scored all {block.items} items: {block.reason}"
    else:
        line = (
            f"the first judge {block.first_model} kept {block.kept} of {block.items} items "
            f"({block.share_kept or 0:.0%}, confidence >= {block.threshold:g}; calibrated for {block.guarantee}); "
            f"the strong judge scored {block.escalated}"
        )
    return line + "; " + _cost_words(block)


def cascade_report(run: FinishedRun) -> None:
    """Print, for each cascade judge of the run, the share its first judge kept and the cost saved (as recorded)."""
    summary = run.store.summary_record
    if summary is None or not summary.cascade:
        return
    console = run.console or lazy_console(stderr=True)
    for name, block in summary.cascade.items():
        print_wrapped(console, cascade_line(block), first=f"cascade {name}: ", indent="  ")


def _cost_words(block: CascadeJudgeRecord) -> str:
    """What the run's judge calls say of the cascade's cost."""
    if block.threshold is None:
        spent = f" cost ${block.first_cost_usd:.4f}" if block.first_cost_usd is not None else ""
        return f"the first judge's calls{spent} only calibrate it"
    saved, items = block.cost_saved_usd, block.items or 0
    if saved is None or not items:
        return f"cost saved unknown: {block.cost_reason}"
    if block.escalated:
        per_item = (block.strong_cost_usd or 0.0) / block.escalated
    else:  # every item kept: the strong judge priced as on its calibration
        per_item = (saved + (block.first_cost_usd or 0.0)) / items
    if saved < 0:
        return (
            f"no judge cost saved: the first judge's calls (${block.first_cost_usd or 0:.4f}) cost more than the "
            f"strong calls they spared (${per_item * (block.kept or 0):.4f})"
        )
    priced = " (the strong judge priced as on its calibration)" if block.cost_basis else ""
    return f"judge cost saved ${saved:.4f} of ${per_item * items:.4f} ({block.cost_saved_share or 0:.0%}){priced}"
