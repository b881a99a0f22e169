"""The score a judge's canary compares with the judge's stored calibration."""

from __future__ import annotations

from scoregate.catalog.canaries import CanarySpec
from scoregate.catalog.project import Project
from scoregate.scoring.kinds.llm_judge import as_llm_judge


def judge_score_key(project: Project, judge: str, spec: CanarySpec) -> str:
    """Return the score key a canary compares: its `score_key`, else the judge's primary score."""
    evaluator = as_llm_judge(project.evaluators[judge])
    assert evaluator is not None, f"a canary watches an llm_judge, and {judge} is not one"
    return spec.score_key or evaluator.score.key
