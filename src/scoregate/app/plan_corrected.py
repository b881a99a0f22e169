"""`scoregate plan` on a judge score whose judge has a calibration set bound to it: the variance of the corrected
estimate the run's summary holds (`scores.<key>.corrected`), as the correction makes it.

- PPI++ (a numeric score): one run's corrected mean is λ·(the run's judge mean) + (the labels' mean residual); a
  gate on it compares one run with its threshold, so the plan is of one run (not a difference of two): the items'
  variance × λ², plus the labels' part, se² − λ²·s²/N, that more items never shrink (`Variance.fixed`);
- sensitivity/specificity (a pass/fail score): a difference of pass rates is Δp/Ĵ with Ĵ = q0 + q1 − 1 measured on
  the labels: the items' variance of the difference × 1/J², plus Var(Ĵ)/J² × Δ² (`Variance.relative`).

Where the run has no corrected block (no human labels for the judge), nothing changes; where it is null or the
calibration no longer binds to the judge as it is now, a note says so and the plan stays on the raw scores.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from scoregate.analysis.power import ALPHA, Variance, split_variance, youden_relative, z
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.store.run_store import RunStore
from scoregate.store.sections import CorrectedStats

LABELS = "past a point only more human labels shrink it, not more items"


def corrected_variance(
    project: Project,
    plan: ExperimentPlan,
    store: RunStore,
    metric: str,
    variance: Variance,
    *,
    values: dict[str, list[float]],
    power: float,
) -> tuple[Variance, bool, list[str]] | None:
    """(the corrected estimate's variance, whether it is of one run rather than a difference, notes) when the run's
    summary corrects `metric` with a calibration bound to its judge as it is now (`values`: item id → the metric's
    values over the run's repeats); (the variance as it was, False, why not) when it cannot; None when the run has
    no corrected block for it."""
    summary = store.summary_record
    stats = summary.score(metric) if summary is not None else None
    block = stats.corrected if stats is not None else None
    if block is None:
        return None
    if block.value is None:
        return variance, False, [f"corrected estimate not planned: it is null in run {store.run_id} ({block.reason})"]
    from scoregate.app.run.corrected_metrics import calibration_set

    bound = calibration_set(project, plan, metric)
    if bound.problem is not None:
        return variance, False, [f"corrected estimate not planned: {bound.problem}"]
    if block.method == "sensitivity-specificity":
        return pass_fail_variance(block, variance)
    return _ppi(block, values, power=power)


def _ppi(block: CorrectedStats, values: dict[str, list[float]], *, power: float) -> tuple[Variance, bool, list[str]]:
    lam, se = block.details.get("lambda"), block.details.get("se")
    run = [v[0] for v in values.values() if v]
    if lam is None or se is None or len(run) < 2:
        raise ValueError("a PPI++ block carries lambda and se, over at least two run items")
    between, within, _ = split_variance(values)
    fixed = max(0.0, se * se - lam * lam * statistics.variance(run) / (block.n_run or len(run)))
    floor = (z(1 - ALPHA / 2) + z(power)) * math.sqrt(fixed)
    scaled = Variance(
        lam * lam * between,
        None if within is None else lam * lam * within,
        fixed,
        len(values),
        f"corrected mean of one run ({block.method_name}, lambda {lam:.3g})",
    )
    note = (
        f"corrected ({block.method_name}, {block.n_labels} labels, lambda {lam:.3g}): a gate on the corrected mean "
        f"compares one run with its threshold; the items' variance × lambda², plus the labels' part (sd "
        f"{math.sqrt(fixed):.3g}) that no item shrinks: no number of items detects less than {floor:.3g}; {LABELS}"
    )
    return scaled, True, [note]


def pass_fail_variance(block: CorrectedStats, variance: Variance) -> tuple[Variance, bool, list[str]]:
    """The variance of a difference of corrected pass rates: the raw difference's × 1/J², plus Var(Ĵ)/J² × Δ²."""
    d = block.details
    q0, q1, m0, m1 = d.get("q0"), d.get("q1"), d.get("m0"), d.get("m1")
    if q0 is None or q1 is None or not m0 or not m1:
        raise ValueError("a sensitivity/specificity block carries q0, q1, m0 and m1")
    youden = q0 + q1 - 1
    relative = youden_relative(q0, q1, int(m0), int(m1))
    scale = 1 / (youden * youden)
    scaled = replace(
        variance,
        between=variance.between * scale,
        within=None if variance.within is None else variance.within * scale,
        relative=relative,
        source=f"{variance.source}; corrected by the judge's Youden J {youden:.3g}",
    )
    note = (
        f"corrected ({block.method_name}, {block.n_labels} labels, Youden J {youden:.3g}): the items' variance × "
        f"1/J² ({scale:.3g}), plus the labels' part Var(J)/J² = {relative:.3g} of the difference squared, which no "
        f"item shrinks; {LABELS}"
    )
    return scaled, False, [note]
