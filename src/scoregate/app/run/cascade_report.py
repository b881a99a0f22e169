"""The post-run step of a cascade judge: how many items its first judge kept, its guarantee, and the cost saved,
from the run's telemetry."""

from __future__ import annotations

from dataclasses import dataclass

from scoregate.analysis.cascade import CascadeCost, cascade_cost
from scoregate.app.run.finished_run import FinishedRun
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec, as_llm_judge
from scoregate.store.run_store import RunStore
from scoregate.support.console import lazy_console
from scoregate.support.terminal_text import print_wrapped

__all__ = ["CascadeRun", "cascade_report", "cascade_run"]


@dataclass(frozen=True)
class CascadeRun:
    """One cascade judge in one run: the items it scored, those its first judge kept, and what that saved."""

    evaluator: str
    first_model: str
    threshold: float | None
    items: int
    kept: int
    cost: CascadeCost


def cascade_run(store: RunStore, spec: LlmJudgeSpec) -> CascadeRun:
    """Count, from a stored run's items and calls, what the cascade judge `spec` kept and what it saved."""
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
    return CascadeRun(spec.name, first_model, spec.cascade.threshold, items, kept, cost)


def cascade_report(run: FinishedRun) -> None:
    """Print, for each cascade judge of the run, the share its first judge kept and the cost saved."""
    judges = [j for spec in run.plan.evaluators.values() if (j := as_llm_judge(spec)) and j.cascade]
    if not judges:
        return
    console = run.console or lazy_console(stderr=True)
    for judge in judges:
        assert judge.cascade is not None
        found = cascade_run(run.store, judge)
        if found.threshold is None:
            line = f"the strong judge scored all {found.items} items (no threshold holds for this judge version)"
        else:
            share = found.kept / found.items if found.items else 0.0
            line = (
                f"the first judge {found.first_model} kept {found.kept} of {found.items} items ({share:.0%}, "
                f"confidence >= {found.threshold:g}; calibrated for agreement >= {judge.cascade.target:g} with "
                f"probability {1 - judge.cascade.delta:g}); the strong judge scored {found.items - found.kept}"
            )
        line += "; " + _cost_words(found)
        print_wrapped(console, line, first=f"cascade {judge.name}: ", indent="  ")


def _cost_words(found: CascadeRun) -> str:
    """What the run's judge calls say of the cascade's cost."""
    cost = found.cost
    if found.threshold is None:
        spent = f" cost ${cost.first_cost:.4f}" if cost.first_cost is not None else ""
        return f"the first judge's calls{spent} only calibrate it"
    if cost.saved is None or cost.strong_per_item is None:
        return f"cost saved unknown: {cost.reason}"
    if cost.saved < 0:
        spared = cost.strong_per_item * found.kept
        return (
            f"no judge cost saved: the first judge's calls (${cost.first_cost or 0:.4f}) cost more than the strong "
            f"calls they spared (${spared:.4f})"
        )
    alone = cost.strong_per_item * cost.items
    return f"judge cost saved ${cost.saved:.4f} of ${alone:.4f} ({cost.saved_share or 0:.0%})"
