"""The bias-corrected mean of each judge score of a run whose judge has a calibration set bound to it as it is now.

The calibration set is the saved calibration's item pairs (`calibrations/<evaluator>.json`, `scores.<key>.pairs`:
the judge's and the human's score of each item). It binds when the judge is the one it was saved with: the same
evaluator version, fingerprint (prompt, rubric, scale, sampling) and judge model (`calibration_runs.judge_change`).
A judge score with a calibration that does not bind, or cannot serve, gets a corrected block that is null with
the reason; one that was never calibrated gets none unless a gate asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoregate.analysis.corrected_estimators import CorrectedEstimate, corrected_mean
from scoregate.analysis.gates import GateResult
from scoregate.app.calibration_runs import calibration_path, judge_change, judge_model, read_calibrations
from scoregate.app.run.run_options import runs_dir
from scoregate.catalog.config_models import CORRECTED_STATS, GateSpec, Settings
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.store.run_store import RunStore

Column = Callable[[str], Sequence[float | None] | None]
"""A run's per-item values of a score key (None: the run has no such column)."""


def asks_corrected(gate: GateSpec, settings: Settings) -> bool:
    """True when `gate` is judged on the corrected estimate: its own `estimate:`, else the project's setting."""
    if gate.estimate is not None:
        return gate.estimate == "corrected"
    return settings.gate_estimate == "corrected" and gate.stat in CORRECTED_STATS and gate.compare_to is None


def _null(reason: str, confidence: float) -> dict[str, Any]:
    return CorrectedEstimate("ppi++", None, None, None, confidence, 0, 0, reason).to_dict() | {
        "method": None,
        "method_name": None,
    }


@dataclass(frozen=True)
class CalibrationSet:
    """A judge score's calibration pairs bound to the judge as it is now, or why there is none to use."""

    judge: list[float | None] = field(default_factory=list)
    human: list[float | None] = field(default_factory=list)
    calibrated_at: str | None = None
    human_key: str | None = None
    problem: str | None = None
    """Why the set cannot serve (None: it can); `never` is set when the judge was never calibrated on the key."""
    never: bool = False


def _judge_of(plan: ExperimentPlan, key: str) -> str | None:
    """The judge evaluator of `plan` that writes `key`, or None."""
    return next(
        (name for name, spec in plan.evaluators.items() if as_llm_judge(spec) and key in spec.score_keys()), None
    )


def calibration_set(project: Project, plan: ExperimentPlan, key: str) -> CalibrationSet:
    """Return the saved calibration pairs of judge score `key`, while they are bound to the judge as it is now: the
    latest canary's re-scored set when its judge is the current one, else the calibration's own."""
    name = _judge_of(plan, key)
    if name is None:
        return CalibrationSet(problem=f"{key} is not a judge score of this run: only a judge's scores are corrected")
    return bound_calibration(project, name, key, judge_model(project, project.evaluators[name], plan.judge_model_name))


def bound_calibration(project: Project, name: str, key: str, model: dict[str, str | None] | None) -> CalibrationSet:
    """Return the saved calibration pairs of `key` written by judge `name` judging with `model`, while they are
    bound to that judge as its file is now (the canary's re-scored set first), or why there are none to use."""
    how = f"`scoregate calibrate --run RUN_ID --judge-key {key} --human-key HUMAN_KEY --save`"
    path = calibration_path(project, name)
    never = CalibrationSet(problem=f"judge {name} has no saved calibration of {key}: run {how}", never=True)
    if not path.is_file():
        return never
    try:
        record = read_calibrations(path)["scores"].get(key)
    except ValueError as exc:
        return CalibrationSet(problem=f"{path} is unreadable ({exc})")
    if not isinstance(record, dict):
        return never
    when = record.get("calibrated_at")
    spec = project.evaluators[name]
    canary = record.get("canary")
    if isinstance(canary, dict) and isinstance(canary.get("pairs"), dict) and judge_change(canary, spec, model) is None:
        record, when = canary, canary.get("checked_at")  # the newest set scored by the judge as it is now
    elif changed := judge_change(record, spec, model):
        return CalibrationSet(
            problem=f"the calibration set of {key} ({when}) is bound to another judge: {changed}; recalibrate: {how}"
        )
    pairs = record.get("pairs")
    if not isinstance(pairs, dict) or not pairs:
        return CalibrationSet(
            problem=f"the calibration of {key} ({when}) was saved without its item pairs (pooled over several "
            f"runs); save it from one run: {how}"
        )
    judge = [p[0] if isinstance(p, list) and len(p) == 2 else None for p in pairs.values()]
    human = [p[1] if isinstance(p, list) and len(p) == 2 else None for p in pairs.values()]
    return CalibrationSet(judge, human, when, record.get("human_key"))


def _block(
    project: Project, plan: ExperimentPlan, key: str, column: Sequence[float | None], confidence: float
) -> dict[str, Any] | None:
    """The corrected block of one judge score, or None when its judge was never calibrated on it."""
    found = calibration_set(project, plan, key)
    if found.never:
        return None
    if found.problem is not None:
        return _null(found.problem, confidence)
    try:
        estimate = corrected_mean(column, found.judge, found.human, confidence=confidence)
    except ValueError as exc:
        return _null(f"the calibration set of {key} ({found.calibrated_at}) cannot serve: {exc}", confidence)
    return estimate.to_dict() | {"calibrated_at": found.calibrated_at, "human_key": found.human_key}


def corrected_blocks(
    project: Project, plan: ExperimentPlan, column: Column, *, wanted: Collection[str] = (), confidence: float
) -> dict[str, dict[str, Any]]:
    """Score key → its corrected block, for each judge score of the run with a saved calibration, and for each key
    in `wanted` (the keys a gate asks to correct), null with the reason when there is none to use."""
    blocks: dict[str, dict[str, Any]] = {}
    judge_keys = [key for spec in plan.evaluators.values() if as_llm_judge(spec) for key in spec.score_keys()]
    for key in dict.fromkeys([*judge_keys, *wanted]):
        values = column(key)
        block = _block(project, plan, key, values, confidence) if values is not None else None
        if block is None and key in wanted:
            block = _null(str(calibration_set(project, plan, key).problem), confidence)
        if block is not None:
            blocks[key] = block
    return blocks


def corrected_regression_gate(
    gate: GateSpec, store: RunStore, project: Project, plan: ExperimentPlan, *, min_coverage: float, confidence: float
) -> GateResult:
    """Judge a regression gate on the corrected paired difference against its baseline run (pass/fail scores), and
    with `slices:` each slice on its corrected difference, Holm across them."""
    from scoregate.analysis.corrected_difference import judge_corrected_regression
    from scoregate.analysis.regression import compared_label, metric_values, without_baseline
    from scoregate.app.regression_gate import find_baseline

    label = compared_label(gate)
    search = find_baseline(store, label=label, project_root=project.root, runs_dir=runs_dir(project))
    if search.store is None:
        return without_baseline(gate, str(search.problem)).model_copy(update={"estimate": "corrected"})
    found = calibration_set(project, plan, gate.metric)
    versions = ", ".join(f"{h.prompt}@{h.version}" for h in search.holders.values())
    against = f"vs {label} run {search.store.run_id} ({versions})"
    overall = judge_corrected_regression(
        gate, metric_values(search.store.iter_results(), gate.metric), metric_values(store.iter_results(), gate.metric),
        found.judge, found.human, against=against, min_coverage=min_coverage, confidence=confidence,
        unavailable=found.problem,
    )  # fmt: skip
    if not gate.slices or overall.status == "incomplete":
        return overall
    from scoregate.analysis.corrected_slices import corrected_slices
    from scoregate.analysis.slices import with_slices
    from scoregate.app.run.slice_gates import slice_items

    results = corrected_slices(
        slice_items(gate, store, search.store), gate.slices, found.judge, found.human,
        margin=0.2 if gate.margin is None else gate.margin, direction="lower" if gate.op in ("<=", "<") else "higher",
        alpha=1 - confidence, min_items=gate.min_slice_items,
    )  # fmt: skip
    return with_slices(overall, results, min_items=gate.min_slice_items)
