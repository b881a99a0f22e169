"""summary.json `run_metrics` as a typed model whose fields come from the vocabulary's run-metric table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoregate.store.record import RunMetrics, RunSummary
from scoregate.store.record_files import read_summary
from scoregate.store.vocabulary import RUN_METRICS

OLD_RUNS = Path(__file__).resolve().parents[1] / "runs_before_schema_version"
RUN_NAMES = sorted(path.name for path in OLD_RUNS.iterdir())


def test_every_summary_metric_of_the_table_is_a_field_with_its_direction_and_no_other_is() -> None:
    in_summary = {m.key: m.direction for m in RUN_METRICS if m.in_summary}
    fields = RunMetrics.model_fields
    assert set(fields) == set(in_summary)
    assert {key: RunMetrics.direction(key) for key in fields} == in_summary
    assert "cost_usd_per_item" not in fields  # computed by a comparison, never in summary.json


def test_a_summary_reads_its_metrics_as_fields_and_keeps_the_keys_the_table_does_not_name() -> None:
    raw = json.loads((OLD_RUNS / "smoke-repeat-2" / "summary.json").read_text(encoding="utf-8"))
    metrics = read_summary(OLD_RUNS / "smoke-repeat-2" / "summary.json").run_metrics
    assert isinstance(metrics, RunMetrics)
    for m in RUN_METRICS:
        if m.in_summary:
            assert getattr(metrics, m.key) == metrics.value(m.key) == raw["run_metrics"].get(m.key)
    assert metrics.value("task_calls") == raw["run_metrics"]["task_calls"]
    assert isinstance(metrics.value("items"), int) and not isinstance(metrics.value("success_rate"), int)


def test_a_summary_without_metrics_reads_each_as_none_and_writes_none_of_them_back() -> None:
    summary = RunSummary.model_validate({"run_id": "r", "run_metrics": {"items": 3, "cost_usd_total": None}})
    assert summary.run_metrics.value("items") == 3
    assert summary.run_metrics.value("latency_p50_ms") is None
    assert summary.run_metrics.value("no_such_metric") is None
    assert summary.to_dict()["run_metrics"] == {"items": 3, "cost_usd_total": None}
    assert summary.run_metrics.has("cost_usd_total") and not summary.run_metrics.has("tokens_in_cached")
    assert summary.run_metrics["cost_usd_total"] is None
    with pytest.raises(KeyError):
        summary.run_metrics["latency_p50_ms"]  # a key the file did not write, as a dict says
    assert RunSummary.model_validate({"run_id": "r"}).run_metrics.value("items") is None


@pytest.mark.parametrize("name", RUN_NAMES)
def test_an_old_runs_metrics_write_back_in_the_files_order_with_its_numbers_as_written(name: str) -> None:
    raw = json.loads((OLD_RUNS / name / "summary.json").read_text(encoding="utf-8"))["run_metrics"]
    written = read_summary(OLD_RUNS / name / "summary.json").to_dict()["run_metrics"]
    assert json.dumps(written, indent=2) == json.dumps(raw, indent=2)  # key order, ints, floats and nulls


def test_a_metric_that_is_not_a_number_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"run_metrics\.items"):
        RunSummary.model_validate({"run_id": "r", "run_metrics": {"items": "many"}})
