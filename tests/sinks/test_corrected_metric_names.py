"""The corrected judge mean beside the raw one in the mirrors: MLflow metrics and Langfuse run scores, labelled."""

from __future__ import annotations

import math
from typing import Any

from scoregate.sinks.langfuse.score_mapping import run_scores
from scoregate.sinks.mlflow.readable import readable_metrics
from scoregate.store.record import RunSummary

CORRECTED = {
    "method": "ppi++", "method_name": "PPI++", "value": 2.75321, "ci_low": 2.10111, "ci_high": 3.40532,
    "confidence": 0.95, "n_run": 6, "n_labels": 12, "reason": None, "details": {"lambda": 0.9},
    "calibrated_at": "2026-11-29T12:00:00+00:00", "human_key": "human_actionability",
}  # fmt: skip


def _summary(corrected: dict[str, Any]) -> RunSummary:
    stats = {"n_total": 6, "n_measured": 6, "coverage": 1.0, "mean": 4.333, "ci_low": 3.8, "ci_high": 4.8,
             "data_type": "numeric", "corrected": corrected}  # fmt: skip
    return RunSummary.model_validate({"run_id": "r1", "scores": {"actionability_score": stats}, "gates": []})


def test_mlflow_gets_the_corrected_mean_and_interval_beside_the_raw_mean() -> None:
    metrics = readable_metrics(_summary(CORRECTED))
    assert metrics["actionability_score_mean"] == 4.333
    assert metrics["actionability_score_corrected_mean"] == 2.753
    assert metrics["actionability_score_corrected_ci_low"] == 2.101
    assert metrics["actionability_score_corrected_ci_high"] == 3.405


def test_mlflow_keeps_the_key_as_nan_when_the_corrected_mean_is_null() -> None:
    null = {**CORRECTED, "value": None, "ci_low": None, "ci_high": None, "reason": "6 calibration pairs"}
    metrics = readable_metrics(_summary(null))
    assert math.isnan(metrics["actionability_score_corrected_mean"])


def test_langfuse_gets_a_labelled_corrected_run_score_and_the_null_reason_when_there_is_none() -> None:
    posts = {p.name: p for p in run_scores(_summary(CORRECTED), None)}
    corrected = posts["actionability_score_corrected_mean"]
    assert corrected.value == 2.75321 and corrected.data_type == "NUMERIC"
    assert corrected.comment == (
        "bias-corrected by the judge's calibration set (PPI++, 12 labels vs human_actionability), "
        "95% CI [2.10111, 3.40532]; raw mean 4.333"
    )
    null = {**CORRECTED, "value": None, "ci_low": None, "ci_high": None, "reason": "6 calibration pairs: too few"}
    posts = {p.name: p for p in run_scores(_summary(null), None)}
    assert "actionability_score_corrected_mean" not in posts
    assert posts["actionability_score_mean"].comment is not None
    assert posts["actionability_score_mean"].comment.endswith("; corrected mean: null (6 calibration pairs: too few)")
