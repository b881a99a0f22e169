"""The response cache: an identical second run asks the model nothing; `--no-cache` asks again."""

from __future__ import annotations

from collections.abc import Callable

from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def scores_by_item(runs: Runs, run_id: str) -> dict[str, dict[str, object]]:
    return {r["item_id"]: {s["name"]: s["value"] for s in r["scores"]} for r in runs.results(run_id)}


def test_identical_second_run_is_served_from_the_cache(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    first = runs.latest()
    assert len(scripted_server.task_requests()) == len(DATASET_IDS)
    scripted_server.clear_requests()

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code == 0
    assert scripted_server.chat_requests() == []  # neither the task nor a judge was asked again
    second = runs.latest()
    assert second != first
    assert scores_by_item(runs, second) == scores_by_item(runs, first)
    calls = [c for r in runs.results(second) for c in r["calls"]]
    assert calls and all(c["cached"] for c in calls)
    metrics = runs.summary(second)["run_metrics"]
    assert metrics["cached_task_calls"] == len(DATASET_IDS)
    assert metrics["latency_p50_ms"] is None and metrics["latency_p95_ms"] is None
    assert metrics["null_reasons"]["latency"] == "no uncached successful task call"
    calls_in_all = len(DATASET_IDS) * 4  # the task and three judges per item
    n = len(DATASET_IDS)
    assert (metrics["task_calls"], metrics["cached_calls"], metrics["calls"]) == (n, calls_in_all, calls_in_all)
    assert (metrics["tokens_in_cached"], metrics["tokens_out_cached"]) == (
        metrics["tokens_in_total"],
        metrics["tokens_out_total"],
    )
    assert metrics["cost_usd_total"] == 0.0  # nothing was spent: a cached call is free
    # the terminal says where the numbers come from: the cache, so no latency and no tokens spent
    assert f"cached {n}/{n} task calls ({calls_in_all}/{calls_in_all} calls in all)" in result.output
    assert "latency not measured (every task call was cached)" in result.output and "—/—" not in result.output
    tokens = f"tokens in/out {metrics['tokens_in_total']}/{metrics['tokens_out_total']} (all cached, not spent)"
    assert tokens in result.output and "cost $0.0000 spent" in result.output
    assert runs.summary(first)["run_metrics"]["latency_p50_ms"] is not None


def test_no_cache_asks_the_model_again(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    scripted_server.clear_requests()

    assert scoregate("run", "smoke", "--no-mlflow", "--no-cache").code == 0

    assert len(scripted_server.task_requests()) == len(DATASET_IDS)
    assert len(scripted_server.judge_requests()) == 3 * len(DATASET_IDS)
    metrics = runs.summary()["run_metrics"]
    assert metrics["cached_task_calls"] == 0 and metrics["cached_calls"] == 0
    assert metrics["tokens_in_cached"] == metrics["tokens_out_cached"] == 0
    assert metrics["latency_p50_ms"] is not None


def test_cache_stats_and_clear(scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0

    assert f"{len(DATASET_IDS)} cached responses" in scoregate("cache", "stats").output
    assert f"removed {len(DATASET_IDS)} cached responses" in scoregate("cache", "clear").output
    assert "0 cached responses" in scoregate("cache", "stats").output
    scripted_server.clear_requests()
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    assert len(scripted_server.task_requests()) == len(DATASET_IDS)
