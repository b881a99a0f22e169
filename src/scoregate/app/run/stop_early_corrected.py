"""The calibration part of a stop-early run whose deciding gate asks for the corrected estimate, checked before any
model call: a pass/fail judge score, a reference scored by the judge as it is now, and a calibration set bound to it
whose Youden interval (`analysis.corrected_sequential`) shows the judge better than chance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoregate.errors import ScoregateError

if TYPE_CHECKING:
    from scoregate.analysis.corrected_sequential import YoudenBound
    from scoregate.catalog.config_models import GateSpec
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project
    from scoregate.store.run_store import RunStore


def youden_for_stop(
    project: Project,
    plan: ExperimentPlan,
    gate: GateSpec,
    reference: RunStore,
    bounds: tuple[float, float],
    *,
    alpha: float,
) -> YoudenBound | None:
    """Return the judge's Youden interval at the calibration set's share of `alpha` when `gate` asks for the
    corrected estimate (None when it does not); raise a one-line error naming why it cannot be had."""
    from scoregate.analysis.corrected_sequential import RUN_SHARE, youden_bound
    from scoregate.app.calibration_runs import judge_identity
    from scoregate.app.run.corrected_metrics import asks_corrected, calibration_set

    if not asks_corrected(gate, project.config.settings):
        return None

    def refuse(why: str) -> ScoregateError:
        return ScoregateError(
            f"--stop-early: gate {gate.name} asks for the corrected estimate, and {why}",
            hint=f"run without --stop-early, or give gate {gate.name} `estimate: raw`",
        )

    if bounds != (0.0, 1.0):
        raise refuse(
            f"{gate.metric} is not a pass/fail score: a corrected stop needs one (for other scores PPI++ would need "
            "human labels of both runs' outputs)"
        )
    try:
        judge_identity(project, [reference], gate.metric)
    except ScoregateError as exc:
        raise refuse(
            f"reference run {reference.run_id} was not scored by the judge as it is now: {exc.message}"
        ) from None
    found = calibration_set(project, plan, gate.metric)
    if found.problem is not None:
        raise refuse(found.problem)
    try:
        bound = youden_bound(found.judge, found.human, alpha=round(alpha * (1 - RUN_SHARE), 12))
    except ValueError as exc:
        raise refuse(f"the calibration set of {gate.metric} cannot serve: {exc}") from None
    if isinstance(bound, str):
        raise refuse(bound)
    return bound
