"""The run's vocabulary is written once (store/vocabulary.py) and every reader agrees with it."""

from __future__ import annotations

import json
from pathlib import Path

from scoregate.catalog.directions import default_direction
from scoregate.sinks.langfuse.score_mapping import run_scores
from scoregate.sinks.mlflow.readable import readable_metrics
from scoregate.store.gate_metrics import gated_metrics
from scoregate.store.record import Manifest
from scoregate.store.vocabulary import (
    GATE_RUN_METRICS,
    LANGFUSE_RUN_METRICS,
    MLFLOW_RUN_METRICS,
    RUN_METRICS,
    derived_key,
    is_pipeline_call,
    stage_of,
)

RUN = Path(__file__).resolve().parents[1] / "runs_before_schema_version" / "smoke-repeat-2"


def _summary() -> dict:
    return json.loads((RUN / "summary.json").read_text(encoding="utf-8"))


def test_every_run_metric_of_a_summary_has_a_direction_and_each_mirror_logs_its_share() -> None:
    from scoregate.store.record import RunSummary

    summary = _summary()
    in_summary = {m.key for m in RUN_METRICS if m.in_summary}
    assert in_summary <= set(summary["run_metrics"])
    record = RunSummary.model_validate(summary)
    logged = readable_metrics(record)
    assert {key for key in MLFLOW_RUN_METRICS} <= set(logged)
    posted = {post.name for post in run_scores(record, None)}
    measured = {k for k in LANGFUSE_RUN_METRICS if summary["run_metrics"].get(k) is not None}
    assert measured <= posted and "items" not in posted
    for key, stats in summary["scores"].items():
        if stats.get("data_type") in ("numeric", "boolean") and stats.get("mean") is not None:
            assert derived_key(key, "mean") in logged and derived_key(key, "mean") in posted


def test_a_failed_call_count_is_lower_is_better_and_a_call_count_has_no_direction() -> None:
    assert default_direction("failed_calls") == "lower"
    assert default_direction("calls") == "none"
    assert default_direction("latency_p95_ms") == "lower" and default_direction("success_rate") == "higher"


def test_gates_may_name_the_run_metrics_a_run_reports_but_not_counts_of_items_or_calls() -> None:
    assert "latency_p95_ms" in GATE_RUN_METRICS and "cost_usd_total" in GATE_RUN_METRICS
    assert not {"items", "calls", "cost_usd_per_item"} & set(GATE_RUN_METRICS)


def test_a_calls_stage_and_the_gated_metrics() -> None:
    assert stage_of("task", "summarize") == "summarize" and stage_of("task", None) == "task"
    assert stage_of("stage:extract", "summarize") == "extract" and stage_of("judge:faith", None) == "judge:faith"
    assert is_pipeline_call("stage:extract") and not is_pipeline_call("judge:faith")
    manifest = json.loads((RUN / "manifest.json").read_text(encoding="utf-8"))
    gates = manifest["receipts"]["gates"]
    record = Manifest.model_validate(manifest)
    assert gated_metrics([record, record]) == list(dict.fromkeys(g["metric"] for g in gates))


def test_the_two_renderings_of_a_run_description_say_the_same_facts() -> None:
    from scoregate.store.description import RunDescription
    from scoregate.store.record import RunSummary

    manifest, summary = json.loads((RUN / "manifest.json").read_text(encoding="utf-8")), _summary()
    summary["gates"][0] = {**summary["gates"][0], "status": "fail", "detail": "mean 0.31 < 0.5"}
    described = RunDescription(Manifest.model_validate(manifest), RunSummary.model_validate(summary))
    receipts = manifest["receipts"]
    facts = [
        manifest["run_id"], receipts["model"]["name"], receipts["model"]["model"], receipts["dataset"]["name"],
        *(f"{name}@{info['version']}" for name, info in receipts["prompts"].items()),
        f"gate {summary['gates'][0]['name']} fail: mean 0.31 < 0.5",
    ]  # fmt: skip
    for text in (described.paragraph(), described.markdown()):
        assert [fact for fact in facts if fact not in text] == []
    assert described.markdown().startswith(f"### {receipts['experiment']} · {receipts['model']['name']}")
    assert (
        RunDescription(Manifest.model_validate(manifest))
        .paragraph()
        .startswith(f"scoregate run {manifest['run_id']}: experiment")
    )
