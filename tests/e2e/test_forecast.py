"""`scoregate run EXPERIMENT --dry-run`: the bill forecast before any call, from past runs' telemetry or from the
prompt lengths and max_tokens; the real executable against the scripted server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.forecast_runs import CALLS_PER_ITEM, ITEMS, PRICE_IN, PRICE_OUT, run_cli
from support.forecast_runs import priced as priced  # the fixture
from support.projects import REPO
from support.scripted_openai import ScriptedOpenAI


def test_dry_run_without_past_runs_forecasts_from_prompt_lengths_and_calls_nothing(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    shown = run_cli(priced, "run", "smoke", "--dry-run")
    assert shown.code == 0, shown.output
    assert "from the prompt lengths and max_tokens only" in shown.output
    assert f"{ITEMS} item run(s), {ITEMS * CALLS_PER_ITEM} model calls" in shown.output
    assert "wall time: unknown without past runs" in shown.output
    assert scripted_server.requests == []  # not even the models' one-token check
    assert not (priced / "runs").exists()
    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)
    assert data["basis"] == "prompt lengths and max_tokens" and data["past_runs"] == []
    # output tokens: at most max_tokens a call (the point and the upper end), at least one token a call
    judges = [g for g in data["groups"] if g["stage"].startswith("judge:")]
    assert {g["calls"] for g in judges} == {ITEMS} and len(judges) == 3
    assert data["tokens_out"]["low"] == ITEMS * CALLS_PER_ITEM
    assert data["tokens_out"]["high"] == data["tokens_out"]["expected"] > data["tokens_out"]["low"]
    most = data["tokens_in"]["high"] * PRICE_IN + data["tokens_out"]["high"] * PRICE_OUT
    assert data["cost_usd"]["high"] == pytest.approx(most / 1e6)


def _actual(project: Path, run_id: str) -> dict[str, float]:
    rows = [r for r in json.loads((project / "runs" / run_id / "metrics.json").read_text())["rows"] if r["item_id"]]
    return {
        "calls": len(rows),
        "tokens_in": sum(r["tokens_prompt"] for r in rows),
        "tokens_out": sum(r["tokens_completion"] for r in rows),
        "cost_usd": sum(r["cost_usd"] for r in rows),
    }


def test_dry_run_after_runs_forecasts_from_their_calls_and_the_interval_holds_the_next_run(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    first = run_cli(priced, "run", "smoke", "--no-mlflow", "--no-cache", "--no-report", "--json")
    assert first.code == 0, first.output
    scripted_server.clear_requests()
    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)
    assert scripted_server.requests == []
    assert data["basis"] == "telemetry" and data["past_runs"] == [json.loads(first.out)["run_id"]]
    assert data["calls"] == ITEMS * CALLS_PER_ITEM
    assert data["wall_s"] is not None and data["wall_s"]["low"] <= data["wall_s"]["expected"] <= data["wall_s"]["high"]
    shown = run_cli(priced, "run", "smoke", "--dry-run")
    assert "from the calls of 1 past run(s)" in shown.output and "cost: $" in shown.output
    second = run_cli(priced, "run", "smoke", "--no-mlflow", "--no-cache", "--no-report", "--json")
    actual = _actual(priced, json.loads(second.out)["run_id"])
    assert actual["calls"] == data["calls"]
    for name in ("tokens_in", "tokens_out", "cost_usd"):
        assert data[name]["low"] <= actual[name] <= data[name]["high"], name


def test_dry_run_of_a_limited_repeated_run_counts_its_item_runs(priced: Path) -> None:
    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json", "--limit", "2", "--repeat", "3").out)
    assert data["items"] == 6 and data["calls"] == 6 * CALLS_PER_ITEM


def test_items_whose_reply_is_cached_are_forecast_free_and_no_cache_counts_them_again(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    assert run_cli(priced, "run", "smoke", "--no-mlflow", "--no-report", "--limit", "4").code == 0  # fills the cache
    scripted_server.clear_requests()
    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)
    assert scripted_server.requests == []
    assert (data["cached_items"], data["cached_calls"], data["calls"]) == (
        4,
        4 * CALLS_PER_ITEM,
        ITEMS * CALLS_PER_ITEM,
    )
    assert data["new_calls"] == 2 * CALLS_PER_ITEM
    shown = run_cli(priced, "run", "smoke", "--dry-run")
    assert f"({4 * CALLS_PER_ITEM} answered from the response cache: free, instant)" in shown.output
    uncached = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json", "--no-cache").out)
    assert uncached["cached_calls"] == 0 and uncached["new_calls"] == ITEMS * CALLS_PER_ITEM
    # three times the new item runs, about three times the cost (the past's mix of prompts, not these items')
    assert uncached["cost_usd"]["expected"] == pytest.approx(data["cost_usd"]["expected"] * ITEMS / 2, rel=0.02)


def test_without_past_runs_each_stage_of_a_shipped_pipeline_is_forecast(tmp_path: Path) -> None:
    for part in ("prompts", "evaluators", "datasets"):
        shutil.copytree(REPO / part, tmp_path / part)
    shutil.copy(REPO / "scoregate.yaml", tmp_path / "scoregate.yaml")
    items = len((REPO / "datasets" / "facts_v1.jsonl").read_text(encoding="utf-8").splitlines())
    data = json.loads(run_cli(tmp_path, "run", "facts_summary_live", "--dry-run", "--json").out)
    stages = {(g["stage"], g["prompt"]): g["calls"] for g in data["groups"]}
    assert stages == {("facts", "facts-extract"): items, ("summary", "summary-from-facts"): items}
    assert data["calls"] == 2 * items and not (tmp_path / "runs").exists()


def test_an_interrupted_run_is_read_as_a_past_run(priced: Path, scripted_server: ScriptedOpenAI) -> None:
    scripted_server.delay_next(0.25, times=1000)  # items' calls only: the check is quick, the budget stops the run
    stopped = run_cli(priced, "run", "smoke", "--no-mlflow", "--no-report", "--no-cache", "--budget-minutes", "0.02")
    assert stopped.code == 1, stopped.output
    (run_id,) = [p.name for p in (priced / "runs").iterdir() if p.is_dir()]
    assert json.loads((priced / "runs" / run_id / "manifest.json").read_text())["status"] == "interrupted"
    scripted_server.clear_requests()

    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)

    assert data["past_runs"] == [run_id] and data["basis"] == "telemetry"
    assert data["wall_s"] is not None and data["wall_s"]["expected"] > 0
    assert data["calls"] == ITEMS * CALLS_PER_ITEM
    assert scripted_server.requests == []


def test_a_first_run_of_an_experiment_gets_a_rough_wall_time_from_its_models_other_runs(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.2
    other = run_cli(priced, "run", "counters", "--no-mlflow", "--no-report", "--no-cache", "--json")
    assert other.code == 0, other.output
    counters_run = json.loads(other.out)["run_id"]
    scripted_server.clear_requests()

    data = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)
    shown = run_cli(priced, "run", "smoke", "--dry-run")

    assert data["past_runs"] == [] and data["basis"] == "prompt lengths and max_tokens"  # no past run of smoke
    wall = data["wall_s"]
    assert wall is not None and 0 < wall["low"] <= wall["expected"] <= wall["high"]
    # 24 calls of about 0.2 s each (the counters run's task calls), as many in parallel as that run reached
    assert 24 * 0.2 / 4 <= wall["expected"] <= 24 * 0.6
    assert data["wall_basis"] == f"rough: the call times of scripted in 1 run of other experiments ({counters_run})"
    assert "wall time: " in shown.output and "rough: the call times of scripted in 1 run of other" in shown.output
    assert scripted_server.requests == []  # the dry runs called no model


def test_with_no_call_of_its_model_measured_the_wall_time_says_how_to_measure_one(priced: Path) -> None:
    shown = run_cli(priced, "run", "smoke", "--dry-run")

    assert "wall time: unknown without past runs: no call of scripted measured yet" in shown.output
    assert "`scoregate run smoke --limit 1` measures it" in shown.output
