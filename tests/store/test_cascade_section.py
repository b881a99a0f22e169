"""summary.json `cascade`: a cascade judge's figures in the run, read as a type and written back byte for byte."""

from __future__ import annotations

import json

from scoregate.store.record import RunSummary

JUDGE = "ev_actionability_v1"
KEPT = {
    "first_model": "cheap", "strong_model": "scripted", "threshold": 1.0, "target": 0.8, "delta": 0.1,
    "guaranteed_level": 0.8, "guarantee": "agreement >= 0.8 with probability 0.9", "calibration_labels": 40,
    "items": 40, "kept": 30, "escalated": 10, "share_kept": 0.75, "first_cost_usd": 0.002,
    "strong_cost_usd": 0.004, "cost_saved_usd": 0.01, "cost_saved_share": 0.625, "reason": None,
    "cost_reason": None, "later_field": [1, 2],
}  # fmt: skip


def test_the_summary_reads_the_cascade_block_as_a_type_and_writes_it_back_byte_for_byte() -> None:
    raw = {"run_id": "r1", "gates": [], "cascade": {JUDGE: KEPT}}
    summary = RunSummary.model_validate(raw)
    assert summary.cascade is not None
    assert summary.cascade[JUDGE].share_kept == 0.75 and summary.cascade[JUDGE].kept == 30
    assert json.dumps(summary.to_dict()) == json.dumps(raw)


def test_a_summary_without_the_block_has_none() -> None:
    assert RunSummary.model_validate({"run_id": "r1"}).cascade is None
