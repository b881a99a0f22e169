"""`compare --estimate corrected`: each judge score's corrected paired difference of pass rates, beside the raw one.

Both runs must have been scored by the judge as its file is now (`calibration_runs.judge_identity`: the same
evaluator version and file, the same judge model), and that judge's saved calibration set must be bound to it
(`corrected_metrics.bound_calibration`); one calibration set then corrects both runs, Δθ = Δp/(q0 + q1 − 1)
(`analysis.corrected_difference`). The interval is computed at the level of the raw interval beside it (1 − α for a
primary score, its Holm step-down level for a secondary one), so it keeps the raw comparison's error control, and
its verdict is read from it by the raw comparison's rule. Where it cannot be computed the block is null with the
reason: a 1-5 score (a corrected paired difference would need human labels of both runs' outputs), no calibration
set bound to the judge, runs scored by another judge version, too few labels, a judge no better than chance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoregate.analysis.corrected_difference import PASS_FAIL_ONLY, corrected_difference
from scoregate.analysis.corrected_estimators import CorrectedEstimate, is_binary
from scoregate.analysis.regression import metric_values
from scoregate.analysis.verdicts import interval_verdict
from scoregate.app.calibration_runs import judge_identity
from scoregate.app.run.corrected_metrics import bound_calibration
from scoregate.errors import ScoregateError
from scoregate.scoring.kinds.llm_judge import as_llm_judge

if TYPE_CHECKING:
    from scoregate.analysis.compare_runs import RunComparison, ScoreComparison
    from scoregate.catalog.project import Project
    from scoregate.store.run_store import RunStore

ESTIMATES = ("raw", "corrected")


def _null(reason: str, confidence: float, n: int) -> dict[str, Any]:
    estimate = CorrectedEstimate("sensitivity-specificity", None, None, None, confidence, n, 0, reason)
    return estimate.to_dict() | {"verdict": "cannot compare", "non_inferior": None}


def _judge_keys(project: Project) -> dict[str, str]:
    """Score key → the judge evaluator of the project that writes it."""
    return {key: name for name, spec in project.evaluators.items() if as_llm_judge(spec) for key in spec.score_keys()}


def _difference(
    project: Project, store_a: RunStore, store_b: RunStore, key: str, score: ScoreComparison, margin: float | None
) -> dict[str, Any]:
    level = score.stats.ci_level
    a, b = metric_values(store_a.iter_results(), key), metric_values(store_b.iter_results(), key)
    if not is_binary(list(a.values()), list(b.values())):
        return _null(PASS_FAIL_ONLY, level, score.stats.n)  # no calibration set would serve: say so first
    try:
        judge = judge_identity(project, [store_a, store_b], key)
    except ScoregateError as exc:
        return _null(f"no calibration set corrects both runs: {exc.message}", level, score.stats.n)
    found = bound_calibration(project, judge.evaluator, key, judge.model)
    if found.problem is not None:
        return _null(found.problem, level, score.stats.n)
    ids = [item for item in b if item in a]
    estimate = corrected_difference(
        [b[i] for i in ids], [a[i] for i in ids], found.judge, found.human, confidence=level
    )
    verdict, non_inferior = interval_verdict(
        estimate.ci_low, estimate.ci_high, direction=score.direction, margin=margin
    )
    if estimate.value is None:
        verdict = "cannot compare"
    return estimate.to_dict() | {
        "verdict": verdict, "non_inferior": non_inferior, "evaluator": judge.evaluator,
        "calibrated_at": found.calibrated_at, "human_key": found.human_key,
    }  # fmt: skip


def corrected_differences(
    project: Project, store_a: RunStore, store_b: RunStore, comparison: RunComparison
) -> dict[str, dict[str, Any]]:
    """Score key → the corrected paired difference (B − A) of each compared judge score, null with the reason
    where it cannot be computed; a score no judge of the project writes gets none."""
    judges = _judge_keys(project)
    return {
        key: _difference(project, store_a, store_b, key, score, comparison.margins.get(key))
        for key, score in comparison.scores.items()
        if key in judges
    }
