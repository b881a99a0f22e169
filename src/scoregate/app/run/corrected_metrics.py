"""The bias-corrected mean of each judge score of a run whose judge has a calibration set bound to it as it is now.

The calibration set is the saved calibration's item pairs (`calibrations/<evaluator>.json`, `scores.<key>.pairs`:
the judge's and the human's score of each item). It binds when the judge is the one it was saved with: the same
evaluator version, fingerprint (prompt, rubric, scale, sampling) and judge model (`calibration_runs.judge_change`).
A judge score with a calibration that does not bind, or cannot serve, gets a corrected block that is null with
the reason; one that was never calibrated gets none unless a gate asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from scoregate.analysis.corrected_estimators import CorrectedEstimate, corrected_mean
from scoregate.app.calibration_runs import calibration_path, judge_change, judge_model, read_calibrations
from scoregate.catalog.config_models import CORRECTED_STATS, GateSpec, Settings
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import as_llm_judge

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


def _block(
    project: Project, plan: ExperimentPlan, name: str, key: str, column: Sequence[float | None], confidence: float
) -> dict[str, Any] | None:
    """The corrected block of one judge score, or None when its judge was never calibrated on it."""
    spec = project.evaluators[name]
    how = f"`scoregate calibrate --run RUN_ID --judge-key {key} --human-key HUMAN_KEY --save`"
    path = calibration_path(project, name)
    if not path.is_file():
        return None
    try:
        record = read_calibrations(path)["scores"].get(key)
    except ValueError as exc:
        return _null(f"{path} is unreadable ({exc})", confidence)
    if not isinstance(record, dict):
        return None
    when = record.get("calibrated_at")
    changed = judge_change(record, spec, judge_model(project, spec, plan.judge_model_name))
    if changed:
        return _null(
            f"the calibration set of {key} ({when}) is bound to another judge: {changed}; recalibrate: {how}",
            confidence,
        )
    pairs = record.get("pairs")
    if not isinstance(pairs, dict) or not pairs:
        return _null(
            f"the calibration of {key} ({when}) was saved without its item pairs (pooled over several runs); "
            f"save it from one run: {how}",
            confidence,
        )
    judge = [p[0] if isinstance(p, list) and len(p) == 2 else None for p in pairs.values()]
    human = [p[1] if isinstance(p, list) and len(p) == 2 else None for p in pairs.values()]
    try:
        estimate = corrected_mean(column, judge, human, confidence=confidence)
    except ValueError as exc:
        return _null(f"the calibration set of {key} ({when}) cannot serve: {exc}", confidence)
    return estimate.to_dict() | {"calibrated_at": when, "human_key": record.get("human_key")}


def corrected_blocks(
    project: Project, plan: ExperimentPlan, column: Column, *, wanted: Collection[str] = (), confidence: float
) -> dict[str, dict[str, Any]]:
    """Score key → its corrected block, for each judge score of the run with a saved calibration, and for each key
    in `wanted` (the keys a gate asks to correct), null with the reason when there is none to use."""
    blocks: dict[str, dict[str, Any]] = {}
    for name, spec in plan.evaluators.items():
        if as_llm_judge(spec) is None:
            continue
        for key in spec.score_keys():
            values = column(key)
            if values is None:
                continue
            block = _block(project, plan, name, key, values, confidence)
            if block is None and key in wanted:
                block = _null(
                    f"judge {name} has no saved calibration of {key}: run `scoregate calibrate --run RUN_ID "
                    f"--judge-key {key} --human-key HUMAN_KEY --save`",
                    confidence,
                )
            if block is not None:
                blocks[key] = block
    for key in wanted:
        if key not in blocks:
            blocks[key] = _null(
                f"{key} is not a judge score of this run: only a judge's scores are corrected", confidence
            )
    return blocks
