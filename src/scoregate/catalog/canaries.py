"""`canaries:` in scoregate.yaml: the calibration set pinned to each judge, and how much drift it tolerates."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DriftMetric = Literal["spearman", "kendall", "pearson", "qwk", "exact", "within_one"]
"""Pooled agreement metrics a canary compares (higher is better, as in `scoregate calibrate`)."""
DEFAULT_TOLERANCE = 0.1


class CanarySpec(BaseModel):
    """One judge's canary: an experiment that scores its calibration set, and the human ratings to compare with."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    experiment: str = Field(
        description="Experiment that scores the calibration set with this judge, usually with "
        "`output_from: expected_output` on a dataset whose items carry human ratings (gold_v1)."
    )
    human_key: str = Field(
        description="Human rating to compare with: an imported feedback key, or `human_<f>` for metadata.human.<f>."
    )
    score_key: str | None = Field(default=None, description="Judge score key; default: the evaluator's primary score.")
    metric: DriftMetric = Field(default="spearman", description="Agreement statistic compared with the calibration.")
    tolerance: float = Field(
        default=DEFAULT_TOLERANCE,
        ge=0,
        le=2,
        description="Largest tolerated loss of agreement (calibrated minus canary, in the metric's units).",
    )
    stat: Literal["value", "ci_high"] = Field(
        default="value",
        description="`value`: drifted when the estimated loss exceeds the tolerance; `ci_high`: only when the "
        "whole 95% CI of the change lies below minus the tolerance (confident drift).",
    )
