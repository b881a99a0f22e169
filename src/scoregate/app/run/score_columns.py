"""The score columns a run of a plan writes, and the evaluators that write them."""

from __future__ import annotations

from scoregate.catalog.plan import ExperimentPlan
from scoregate.engine.stages import stage_evaluators, stage_score_columns
from scoregate.scoring.base import Evaluator
from scoregate.store.records import DataType
from scoregate.tracks.registry import build_evaluator


def plan_evaluators(plan: ExperimentPlan) -> list[Evaluator]:
    """Return the plan's evaluators, built, each judge defaulting to the plan's judge model."""
    return [build_evaluator(spec, default_judge_model=plan.judge_model_name) for spec in plan.evaluators.values()]


def score_columns(evaluators: list[Evaluator], plan: ExperimentPlan) -> list[tuple[str, DataType]]:
    """Return every score key a run of `plan` writes: pipeline stages', the evaluators', then composites."""
    keys: list[tuple[str, DataType]] = stage_score_columns(stage_evaluators(plan))
    keys += [k for e in evaluators for k in e.score_keys()]
    return keys + [(name, "numeric") for name in plan.composites]
