"""`run --stop-early --against RUN`: run the items in a seeded order and stop once the gate's question is settled.

Before any model call, `plan_stop_early` checks the request (a reference run of the same dataset version, a gate
whose metric has a declared range) and builds the rule (`analysis.sequential_stop.StopRule`). `run_stop_early`
then runs the items batch by batch in `item_order`; after each batch the anytime-valid confidence sequence of the
paired difference (candidate − reference, Waudby-Smith & Ramdas 2023) is updated, and the run stops when it
settles the question, or at the item or cost cap. Items not run are absent from the run: not null, not failed.
The decision is recorded in the manifest (`stop_early`) and, by `summarize_run`, in `summary.json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoregate.catalog.config_models import GateSpec
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.catalog.models import DatasetItem, ScoreKey
from scoregate.errors import ScoregateError
from scoregate.store.record import DatasetReceipt, Manifest
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore
from scoregate.store.sections import StopDecisionRecord, StopEarlyRecord
from scoregate.store.stop_record import STOPPED_EARLY, stop_line

__all__ = [
    "STOPPED_EARLY", "StopEarlyPlan", "continued_changes", "plan_stop_early", "run_stop_early", "score_range",
    "stop_line", "stop_summary", "stopped_status",
]  # fmt: skip

if TYPE_CHECKING:
    from scoregate.analysis.corrected_sequential import YoudenBound
    from scoregate.analysis.sequential_stop import StopDecision, StopRule
    from scoregate.app.run.run_options import RunOptions
    from scoregate.calls.breaker import CircuitBreaker
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project
    from scoregate.engine.progress import RunProgress
    from scoregate.engine.runner import ItemRunner

DEFAULT_BATCH = 10
"""Items between two looks at the confidence sequence."""
_REGRESSION_MARGIN = 0.2  # analysis.regression.DEFAULT_MARGIN, the margin a regression gate uses when it names none


@dataclass(frozen=True)
class StopEarlyPlan:
    """What a stop-early run compares against, on which gate and metric, by which rule, in which order."""

    reference: str
    gate: str
    metric: str
    rule: StopRule
    order: list[str]
    seed: int
    batch: int
    reference_values: dict[str, float]
    correction: YoudenBound | None = None
    """The judge's Youden interval when the deciding gate asks for the corrected estimate (`corrected_sequential`)."""

    def record(self) -> dict[str, Any]:
        """The manifest's `stop_early` block before the first look (JSON-ready)."""
        corrected = {} if self.correction is None else {"corrected": self.correction.to_dict()}
        return {
            "against": self.reference, "gate": self.gate, "metric": self.metric, "rule": self.rule.to_dict(),
            "order_seed": self.seed, "batch": self.batch, "items": len(self.order),
            "paired_items": len(self.reference_values), **corrected, "decision": None,
        }  # fmt: skip


def _error(message: str, hint: str) -> ScoregateError:
    return ScoregateError(f"--stop-early: {message}", hint=hint)


def _reference_store(project: Project, plan: ExperimentPlan, run_id: str) -> RunStore:
    from scoregate.app.run.run_options import runs_dir

    store = RunStore.open(runs_dir(project), run_id)
    manifest = store.manifest_record
    dataset = manifest.receipts.dataset or DatasetReceipt(name="?")
    if dataset.name != plan.dataset.name or dataset.content_hash != plan.dataset_scan.content_hash:
        raise _error(
            f"reference run {run_id} was run on dataset {dataset.name} "
            f"(content {str(dataset.content_hash)[:12]}), this experiment on {plan.dataset.name} "
            f"(content {plan.dataset_scan.content_hash[:12]})",
            "compare against a run of the same dataset version (`scoregate runs list`)",
        )
    if manifest.status != "finished" or store.summary is None:
        raise _error(
            f"reference run {run_id} is {manifest.status}, not finished",
            f"finish it first (`scoregate run --resume {run_id}`) or name a finished run",
        )
    return store


def _deciding_gate(plan: ExperimentPlan) -> GateSpec:
    for gate in plan.gates:
        if gate.datasets is None or plan.dataset.name in gate.datasets:
            return gate
    raise _error(
        f"experiment {plan.name} has no gate on dataset {plan.dataset.name}, so no primary metric to decide on",
        f"add a gate to `experiments.{plan.name}.gates` in scoregate.yaml; its metric is the one compared",
    )


def _declared_range(spec: EvaluatorSpec, metric: str) -> tuple[float, float] | None:
    declared = getattr(spec, "range", None)  # a one-score kind's own `range:` (kind: custom)
    if getattr(spec, "score_key", None) == metric and isinstance(declared, tuple | list):
        return (float(declared[0]), float(declared[1]))
    fields = [getattr(spec, "score", None), *(getattr(spec, "extra", None) or [])]
    for f in fields:
        if isinstance(f, ScoreKey) and f.key == metric:
            if f.data_type == "boolean":
                return (0.0, 1.0)
            return (float(f.range[0]), float(f.range[1])) if f.range is not None else None
    return None


def _score_columns(plan: ExperimentPlan) -> list[tuple[str, str]]:
    from scoregate.app.run.score_columns import plan_evaluators, score_columns  # the evaluators load only when asked

    return list(score_columns(plan_evaluators(plan), plan))


def score_range(plan: ExperimentPlan, metric: str) -> tuple[float, float] | None:
    """Return [min, max] of one item's `metric`: a boolean, a declared range, or a composite of those; else None."""
    if metric in plan.composites:
        low = high = 0.0
        for part, weight in plan.composites[metric].weights.items():
            bounds = score_range(plan, part)
            if bounds is None:
                return None
            low += weight * (bounds[0] if weight >= 0 else bounds[1])
            high += weight * (bounds[1] if weight >= 0 else bounds[0])
        return (low, high)
    if (metric, "boolean") in _score_columns(plan):
        return (0.0, 1.0)
    for spec in plan.evaluators.values():
        found = _declared_range(spec, metric)
        if found is not None:
            return found
    return None


def numeric_value(result: ItemResult, metric: str) -> float | None:
    """The item's measured `metric` as a number (a boolean as 0/1), or None (failed, not measured, not numeric)."""
    if result.error is not None:
        return None
    score = result.score(metric)
    if score is None or score.value is None or isinstance(score.value, str):
        return None
    return float(score.value)


def plan_stop_early(project: Project, plan: ExperimentPlan, options: RunOptions) -> StopEarlyPlan | None:
    """Check a stop-early request and build its plan before any model call; None for an ordinary run."""
    from scoregate.analysis.corrected_sequential import RUN_SHARE
    from scoregate.analysis.sequential import SequentialInputError, difference_range, item_order
    from scoregate.analysis.sequential_stop import StopRule  # numpy: only for a stop-early run

    if not options.stop_early.on:
        if options.stop_early.against is not None:
            raise ScoregateError("--against names the reference of a stop-early run: add --stop-early")
        return None
    if options.stop_early.against is None:
        raise _error("no reference run to compare against", "add --against RUN_ID (see `scoregate runs list`)")
    conflicts = [
        name
        for name, used in (("--limit", options.selection.limit), ("--repeat", options.selection.repeat > 1))
        if used
    ]
    if conflicts:
        raise _error(
            f"{' and '.join(conflicts)} cannot be combined with it",
            "cap the items with --max-items instead; repeats need every item",
        )
    gate = _deciding_gate(plan)
    if gate.metric not in dict(_score_columns(plan)):
        raise _error(
            f"gate {gate.name} decides on {gate.metric}, which is no per-item score of experiment {plan.name}",
            "put a gate on a per-item score (an evaluator's or a composite's) first in the experiment's gates",
        )
    bounds = score_range(plan, gate.metric)
    if bounds is None:
        raise _error(
            f"score {gate.metric} (gate {gate.name}) has no declared range, and the confidence sequence needs "
            "bounded scores",
            f"declare `range: [min, max]` for {gate.metric} in its evaluator file, or gate on a bounded score",
        )
    reference = _reference_store(project, plan, options.stop_early.against)
    from scoregate.app.run.stop_early_corrected import youden_for_stop

    alpha = 1 - project.config.settings.confidence_level
    correction = youden_for_stop(project, plan, gate, reference, bounds, alpha=alpha)
    values = {}
    for result in reference.iter_results():
        value = numeric_value(result, gate.metric)
        if value is not None:
            values[result.item_id] = value
    if not values:
        raise _error(
            f"reference run {options.stop_early.against} has no measured {gate.metric}",
            "name a reference run whose items were scored on this metric",
        )
    lo, hi = difference_range(*bounds)
    regression = gate.compare_to is not None
    try:
        rule = StopRule(
            lo, hi, question="non-inferior" if regression else "better",
            margin=(gate.margin if gate.margin is not None else _REGRESSION_MARGIN) if regression else 0.0,
            direction="lower" if gate.op in ("<=", "<") else "higher",
            alpha=alpha if correction is None else round(alpha * RUN_SHARE, 12),
            max_items=options.stop_early.max_items, max_cost=options.stop_early.max_cost,
        )  # fmt: skip
    except SequentialInputError as exc:
        raise _error(exc.message, exc.hint or "see `scoregate run --help`") from None
    ids = [str(item.id) for _line, item in iter_items(plan.dataset.path)]
    seed = project.config.settings.seed
    batch = options.stop_early.batch or DEFAULT_BATCH
    return StopEarlyPlan(
        options.stop_early.against, gate.name, gate.metric, rule, item_order(ids, seed), seed, batch, values, correction
    )


class _Collecting:
    """A pipeline that also keeps the results of the current batch."""

    def __init__(self, inner: ItemRunner) -> None:
        self.inner, self.results = inner, list[ItemResult]()

    async def run(self, index: int, item: DatasetItem) -> ItemResult:
        result = await self.inner.run(index, item)
        self.results.append(result)
        return result


def _cost(results: list[ItemResult]) -> float:
    return sum(call.cost_usd or 0.0 for r in results for call in r.calls)


async def run_stop_early(
    stop: StopEarlyPlan,
    pipeline: ItemRunner,
    plan: ExperimentPlan,
    store: RunStore,
    *,
    concurrency: int,
    progress: RunProgress,
    breaker: CircuitBreaker | None,
) -> StopDecision | None:
    """Run the items in the plan's order, a batch at a time, until the rule stops the run; record the decision."""
    from scoregate.analysis.corrected_sequential import CorrectedMonitor
    from scoregate.analysis.sequential_stop import SequentialMonitor, decide
    from scoregate.engine.runner import execute

    items = {item.id: (index, item) for index, (_line, item) in enumerate(iter_items(plan.dataset.path))}
    monitor = (
        SequentialMonitor(stop.rule, len(stop.reference_values))
        if stop.correction is None
        else CorrectedMonitor(stop.rule, len(stop.reference_values), stop.correction)
    )
    collecting, spent, decision = _Collecting(pipeline), 0.0, None
    record = stop.record()
    for start in range(0, len(stop.order), stop.batch):
        batch = [items[item_id] for item_id in stop.order[start : start + stop.batch]]
        collecting.results = []
        await execute(collecting, iter(batch), store, concurrency=concurrency, progress=progress, breaker=breaker)
        spent += _cost(collecting.results)
        differences, ids = _differences(collecting.results, stop)
        if differences:
            decision = monitor.add(differences, cost=spent, item_ids=ids)
        elif stop.rule.max_cost is not None and spent >= stop.rule.max_cost:  # spent, and no new difference
            if not monitor.n:
                store.update_manifest(stop_early={**record, "decision": _spent_before_any_look(start + len(batch))})
                break
            decision = decide(monitor.bounds(), stop.rule, total=monitor.total, cost=spent)
        else:
            continue
        store.update_manifest(stop_early={**record, "decision": _decision_record(decision, start + len(batch))})
        if decision.stop and decision.stop_reason != "all items":  # every paired item seen: the rest still run
            break
    return decision


def _differences(results: list[ItemResult], stop: StopEarlyPlan) -> tuple[list[float], list[str]]:
    differences, ids = [], []
    for result in sorted(results, key=lambda r: r.index):  # a batch's items in a fixed order, however they finished
        value, before = numeric_value(result, stop.metric), stop.reference_values.get(result.item_id)
        if value is not None and before is not None:
            differences.append(value - before)
            ids.append(result.item_id)
    return differences, ids


def _spent_before_any_look(items_run: int) -> dict[str, Any]:
    return {"settled": False, "verdict": "inconclusive", "stop": True, "stop_reason": "cost cap", "n": 0,
            "lower": None, "upper": None, "mean": None, "items_run": items_run}  # fmt: skip


def _decision_record(decision: StopDecision, items_run: int) -> dict[str, Any]:
    out = decision.to_dict()
    out.pop("rule")
    return {**out, "items_run": items_run}


def stopped_status(store: RunStore) -> str:
    """`stopped_early` when the stop rule or a cap ended the run before its last item, else `finished`."""
    return _status(store, store.manifest_record.stop_early)


def _status(store: RunStore, block: StopEarlyRecord | None) -> str:
    if block is None or not block.ended_early():
        return "finished"  # an ordinary run reads its results no extra time
    return STOPPED_EARLY if len(store.done_ids()) < (block.items or 0) else "finished"


def stop_summary(store: RunStore) -> dict[str, Any] | None:
    """The summary's `stop_early` block: "stopped at n of N", the bounds, the verdict and the rule; None otherwise."""
    block = store.manifest_record.stop_early
    if block is None or block.continued_at is not None:
        return None  # an ordinary run, or a stopped run continued to the full dataset: its summary is the full run's
    decision = block.decision or StopDecisionRecord()
    run, total = len(store.done_ids()), block.items or 0  # the items the run holds, looked at or not
    stopped = _status(store, block) == STOPPED_EARLY
    plan = block.to_dict()
    return {
        **{k: plan[k] for k in ("against", "gate", "metric", "rule", "order_seed", "batch")},
        **({"corrected": plan["corrected"]} if "corrected" in plan else {}),
        "stopped": stopped,
        "items_run": run,
        "items_total": total,
        "progress": f"{'stopped' if stopped else 'ran'} at {run} of {total}",
        "paired_differences": decision.n,
        "verdict": decision.verdict or "inconclusive",
        "stop_reason": decision.stop_reason,
        "lower": decision.lower,
        "upper": decision.upper,
        "mean_difference": decision.mean,
        "cost_usd": decision.cost,
    }


def continued_changes(manifest: Manifest) -> dict[str, Any]:
    """The manifest changes of `run --resume` on a stop-early run (stopped or interrupted): it goes on to the full
    dataset, so its summary becomes the full run's."""
    block = manifest.stop_early
    if block is None or block.continued_at is not None:
        return {}  # an interrupted stop-early run goes on to the full dataset too
    from datetime import UTC, datetime

    return {"stop_early": {**block.to_dict(), "continued_at": datetime.now(UTC).isoformat()}}
