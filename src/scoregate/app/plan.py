"""`scoregate plan EXPERIMENT --detect D`: from the variance of the experiment's latest run (paired with its
reference where a regression gate names one, split into items and repeats where it has repeats), the items ×
repeats that detect a difference D with the asked power, their forecast cost and time, and the smallest difference
the dataset as it is can detect. The numbers: `scoregate.analysis.power`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.analysis.power import PlanRow, Variance, detectable, paired_variance, plan_rows, split_variance
from scoregate.app.forecast import forecast_run
from scoregate.app.regression_gate import find_baseline
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError, UsageError
from scoregate.store.run_store import RunStore
from scoregate.store.valid_runs import valid_runs

ItemValues = dict[str, list[float]]


@dataclass(frozen=True)
class PlannedRow:
    """Items needed at some repeats, with the forecast of that run (None where it cannot be forecast)."""

    repeats: int
    items: int | None
    reason: str | None
    cost_usd: dict[str, float] | None = None
    wall_s: dict[str, float] | None = None
    cost_reason: str | None = None


@dataclass(frozen=True)
class MetricPlan:
    """One metric's plan: its variance, the rows, and what the dataset as it is detects."""

    metric: str
    gate: str | None
    variance: Variance
    paired_with: str | None
    rows: list[PlannedRow]
    dataset_items: int
    detectable: dict[int, float | None]
    """Repeats → the smallest difference the dataset's items detect (None: none, the labels' part is too wide)."""
    notes: list[str] = field(default_factory=list)
    one_run: bool = False
    """The variance is of one run's corrected mean against a gate's threshold, not of a difference of two runs."""


@dataclass(frozen=True)
class PowerPlan:
    """`scoregate plan`'s answer for every metric it planned."""

    experiment: str
    detect: float
    power: float
    run_id: str
    metrics: list[MetricPlan]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON."""
        from dataclasses import asdict

        return asdict(self)


def item_values(store: RunStore, metric: str) -> ItemValues:
    """Item id → the metric's measured values over the run's repeats."""
    values: ItemValues = {}
    for result in store.iter_all_records():
        score = result.score(metric)
        if score is not None and isinstance(score.value, int | float):  # a boolean counts as 0 or 1
            values.setdefault(result.item_id, []).append(float(score.value))
    return values


def metric_variance(
    root: Path, store: RunStore, metric: str, label: str | None
) -> tuple[Variance, str | None, list[str]]:
    """The variance of a difference in `metric` between two versions, from one stored run (and its reference)."""
    values = item_values(store, metric)
    try:
        between, within, repeats = split_variance(values)
    except ValueError:
        raise ScoregateError(
            f"run {store.run_id} measured {metric!r} on {len(values)} item(s): a variance needs two",
            hint="run the experiment on more items first",
        ) from None
    notes: list[str] = []
    if within is None:
        notes.append("no repeats in the run: repeats are not planned (`run --repeat 2` measures their noise)")
    if label is not None:
        paired, why = paired_with_reference(root, store, metric, label)
        if paired is not None:
            if within is not None:
                notes.append("a regression gate reads repeat 1 of each run: repeats do not help it, none planned")
            return paired, why, [n for n in notes if not n.startswith("no repeats")]
        notes.append(str(why))
    notes.append("unpaired: the difference of two runs is taken to vary twice as much as one run")
    source = f"run {store.run_id}, {len(values)} items × {repeats:g} repeats"
    return Variance(2 * between, None if within is None else 2 * within, 0.0, len(values), source), None, notes


def paired_with_reference(root: Path, store: RunStore, metric: str, label: str) -> tuple[Variance | None, str]:
    """(the variance of the per-item difference with the `label` run, as a regression gate reads it: repeat 1 of
    each; the reference run's id) or (None, why there is none)."""
    found = find_baseline(store, label=label, project_root=root, runs_dir=root / "runs")
    if found.store is None:
        return None, f"no {label} run to pair with ({found.problem})"
    try:
        paired, n = paired_variance(_first_repeat(store, metric), _first_repeat(found.store, metric), None)
    except ValueError:
        return None, f"the {label} run {found.store.run_id} shares too few measured items to pair"
    return Variance(
        paired, None, 0.0, n, f"paired with {label} run {found.store.run_id} (repeat 1)"
    ), found.store.run_id


def _metrics(plan: ExperimentPlan, asked: str | None) -> list[tuple[str, str | None, str | None]]:
    """(metric, gate, reference label) to plan: `asked`, else every score a gate names, else each primary score."""
    keys = {key for spec in plan.evaluators.values() for key in spec.score_keys()}
    if asked is not None:
        if asked not in keys:
            raise UsageError(f"--metric {asked}: no evaluator of {plan.name} writes it", option="--metric")
        gate = next((g for g in plan.gates if g.metric == asked), None)
        return [(asked, gate.name if gate else None, gate.compare_to if gate else None)]
    found = [(g.metric, g.name, g.compare_to) for g in plan.gates if g.metric in keys]
    if found:
        return list({m: (m, g, label) for m, g, label in found}.values())
    numeric = [key for spec in plan.evaluators.values() for key, way in spec.directions().items() if way != "none"]
    if not numeric:
        raise UsageError(f"{plan.name} has no scored metric to plan", option="--metric")
    return [(numeric[0], None, None)]


def _forecast(project: Project, plan: ExperimentPlan, row: PlanRow) -> PlannedRow:
    if row.items is None:
        return PlannedRow(row.repeats, None, row.reason)
    concurrency = plan.spec.concurrency or project.config.settings.concurrency
    found = forecast_run(project, plan, project.root / "runs", items=row.items * row.repeats, concurrency=concurrency)
    cost = found.forecast.cost_usd
    wall = found.forecast.wall_s
    why = None if cost else f"unknown: no price for {', '.join(found.forecast.unknown_cost) or 'a model'}"
    return PlannedRow(
        row.repeats, row.items, None,
        cost.to_dict() if cost else None, wall.to_dict() if wall else None, why,
    )  # fmt: skip


def plan_power(
    project: Project, experiment: str, *, detect: float, power: float = 0.8, metric: str | None = None
) -> PowerPlan:
    """The items × repeats that detect `detect` with `power`, per metric, from the experiment's latest valid run."""
    if not math.isfinite(detect):
        raise UsageError(
            f"--detect {detect:g}: the difference to detect must be a finite number above 0, e.g. 0.03",
            option="--detect",
        )
    if not detect > 0:
        raise UsageError(f"--detect {detect:g}: the difference to detect must be above 0, e.g. 0.03", option="--detect")
    if not 0 < power < 1:
        raise UsageError(f"--power {power:g}: a probability between 0 and 1, e.g. 0.8", option="--power")
    plan = plan_experiment(project, experiment)
    runs, _ = valid_runs(project.root / "runs", experiment=experiment)
    if not runs:
        raise ScoregateError(
            f"{experiment} has no finished valid run to read its variance from",
            hint=f"run it once, e.g. `scoregate run {experiment} --limit 30 --repeat 2`",
        )
    store = runs[0][0]
    metrics = []
    for name, gate, label in _metrics(plan, metric):
        variance, paired_with, notes = metric_variance(project.root, store, name, label)
        from scoregate.app.plan_corrected import corrected_variance

        if (
            corrected := corrected_variance(
                project, plan, store, name, variance, values=item_values(store, name), power=power
            )
        ) is not None:
            variance, one_run, more = corrected
            paired_with, notes = (None, more) if one_run else (paired_with, [*notes, *more])
        rows = [_forecast(project, plan, row) for row in plan_rows(variance, detect, power=power)]
        items = plan.dataset_scan.count
        can = {row.repeats: _finite(detectable(variance, items, row.repeats, power=power)) for row in rows}
        one = corrected is not None and corrected[1]
        metrics.append(MetricPlan(name, gate, variance, paired_with, rows, items, can, notes, one))
    return PowerPlan(experiment, detect, power, store.run_id, metrics)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def plan_stored_experiment(
    root: Path, experiment: str, *, detect: float, power: float = 0.8, metric: str | None = None
) -> PowerPlan:
    """`plan_power` for the project at `root` (the `scoregate plan` entry point)."""
    from scoregate.tracks.project import load_project

    return plan_power(load_project(root), experiment, detect=detect, power=power, metric=metric)


def gate_power_warnings(root: Path, store: RunStore, gates: Sequence[Any], *, power: float = 0.8) -> list[str]:
    """A line for each regression gate whose margin is below the smallest difference the run, paired with its
    reference, can detect; like the gate, it reads repeat 1 of both runs (a gate without a reference run is
    INCOMPLETE anyway: no line)."""
    lines = []
    for gate in gates:
        margin, label = getattr(gate, "margin", None), getattr(gate, "compare_to", None)
        if margin is None or label is None:
            continue
        variance, paired_with = paired_with_reference(root, store, gate.metric, label)
        if variance is None:
            continue
        can = detectable(variance, variance.items, 1, power=power)
        if margin < can:
            lines.append(
                f"gate {gate.name}: margin {margin:g} is below the smallest difference this run can detect "
                f"({can:.3g} with power {power:g}, {variance.items} items paired with {paired_with}); `scoregate plan "
                f"{store.manifest_record.receipts.experiment} --detect {margin:g}` says how many items it takes"
            )
    return lines


def _first_repeat(store: RunStore, metric: str) -> ItemValues:
    """Item id → [the metric's value in repeat 1], as a regression gate reads it."""
    values: ItemValues = {}
    for result in store.iter_results():
        score = result.score(metric)
        if score is not None and isinstance(score.value, int | float):
            values[result.item_id] = [float(score.value)]
    return values
