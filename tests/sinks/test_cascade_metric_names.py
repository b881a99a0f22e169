"""A cascade judge's figures in the mirrors: MLflow metrics (NaN when null, the reason in a tag) and Langfuse run
scores (posted when measured, the null reasons in one text score)."""

from __future__ import annotations

import math
from typing import Any

from scoregate.sinks.langfuse.score_mapping import run_scores
from scoregate.sinks.mlflow.readable import readable_metrics, readable_tags
from scoregate.store.record import Manifest, RunSummary

JUDGE = "ev_actionability_v1"
KEPT = {
    "first_model": "cheap", "strong_model": "scripted", "threshold": 1.0, "target": 0.8, "delta": 0.1,
    "guaranteed_level": 0.8, "guarantee": "agreement >= 0.8 with probability 0.9", "calibration_labels": 40,
    "items": 40, "kept": 30, "escalated": 10, "share_kept": 0.75, "first_cost_usd": 0.002,
    "strong_cost_usd": 0.004, "cost_saved_usd": 0.01, "cost_saved_share": 0.625, "reason": None,
    "cost_reason": None,
}  # fmt: skip
NONE_HOLDS = {
    **KEPT, "threshold": None, "guaranteed_level": None, "guarantee": None, "calibration_labels": 8, "kept": 0,
    "escalated": 40, "share_kept": None, "cost_saved_usd": None, "cost_saved_share": None,
    "reason": "8 labelled items cannot guarantee agreement >= 0.8 with probability 0.9: it takes at least 11",
    "cost_reason": "without a threshold nothing is kept",
}  # fmt: skip


def _summary(block: dict[str, Any]) -> RunSummary:
    return RunSummary.model_validate({"run_id": "r1", "gates": [], "cascade": {JUDGE: block}})


def test_mlflow_gets_the_guaranteed_level_the_share_kept_and_the_cost_saved() -> None:
    metrics = readable_metrics(_summary(KEPT))
    assert metrics[f"cascade.{JUDGE}.guaranteed_level"] == 0.8
    assert metrics[f"cascade.{JUDGE}.share_kept"] == 0.75
    assert metrics[f"cascade.{JUDGE}.cost_saved_usd"] == 0.01
    assert metrics[f"cascade.{JUDGE}.cost_saved_share"] == 0.625
    assert metrics[f"cascade.{JUDGE}.threshold"] == 1.0


def test_mlflow_keeps_the_keys_as_nan_and_tags_the_reason_when_no_threshold_holds() -> None:
    summary = _summary(NONE_HOLDS)
    metrics = readable_metrics(summary)
    for name in ("guaranteed_level", "share_kept", "cost_saved_usd", "cost_saved_share", "threshold"):
        assert math.isnan(metrics[f"cascade.{JUDGE}.{name}"]), name
    manifest = Manifest.model_validate({"run_id": "r1", "receipts": {}})
    tag = readable_tags(manifest, summary)[f"cascade.{JUDGE}"]
    assert tag.startswith("null: 8 labelled items cannot guarantee agreement >= 0.8")
    assert readable_tags(manifest, _summary(KEPT))[f"cascade.{JUDGE}"] == (
        "the first judge cheap kept 30 of 40 items (75%, confidence >= 1); agreement >= 0.8 with probability 0.9"
    )


def test_langfuse_gets_the_figures_as_run_scores_and_the_null_reasons_in_one_text_score() -> None:
    posts = {p.name: p for p in run_scores(_summary(KEPT), None)}
    assert posts[f"cascade.{JUDGE}.guaranteed_level"].value == 0.8
    assert posts[f"cascade.{JUDGE}.share_kept"].value == 0.75
    assert posts[f"cascade.{JUDGE}.share_kept"].comment == "the first judge cheap kept 30 of 40 items"
    assert posts[f"cascade.{JUDGE}.cost_saved_usd"].value == 0.01
    assert f"cascade.{JUDGE}.null" not in posts

    posts = {p.name: p for p in run_scores(_summary(NONE_HOLDS), None)}
    assert f"cascade.{JUDGE}.share_kept" not in posts and f"cascade.{JUDGE}.guaranteed_level" not in posts
    null = posts[f"cascade.{JUDGE}.null"]
    assert null.data_type == "TEXT"
    assert null.value == (
        "guaranteed_level, share_kept: 8 labelled items cannot guarantee agreement >= 0.8 with probability 0.9: it "
        "takes at least 11; cost_saved_usd: without a threshold nothing is kept"
    )
