"""What the forecast's words say agrees with what it counts: calls in flight (not "in parallel", which the item
concurrency would bound), and no zeros when the response cache answers every call."""

from __future__ import annotations

from pathlib import Path

from support.forecast_runs import ITEMS, run_cli
from support.forecast_runs import priced as priced  # the fixture
from support.scripted_openai import ScriptedOpenAI


def test_the_wall_time_names_the_calls_in_flight_not_calls_in_parallel(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.05
    assert run_cli(priced, "run", "smoke", "--no-mlflow", "--no-report", "--no-cache", "--concurrency", "2").code == 0

    shown = run_cli(priced, "run", "smoke", "--dry-run", "--concurrency", "2")

    words = " ".join(shown.output.split())
    assert "calls in flight on average (calls waiting for a connection included)" in words, shown.output
    assert "in parallel" not in words


def test_when_the_cache_answers_every_call_the_forecast_says_no_model_call_is_needed(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    assert run_cli(priced, "run", "smoke", "--no-mlflow", "--no-report").code == 0  # fills the cache
    scripted_server.clear_requests()

    shown = run_cli(priced, "run", "smoke", "--dry-run")

    assert shown.code == 0, shown.output
    words = " ".join(shown.output.split())
    assert f"no model call is needed: the response cache answers all {ITEMS} item run(s)" in words, shown.output
    assert "input tokens" not in words and "$0.0000" not in words and "0 calls" not in words
    assert scripted_server.requests == []


def test_one_item_of_a_routed_prompt_forecasts_its_task_call_and_says_one_call_in_the_singular(
    priced: Path, scripted_server: ScriptedOpenAI
) -> None:
    shown = run_cli(priced, "run", "smoke", "--dry-run", "--limit", "1")

    assert shown.code == 0, shown.output
    words = " ".join(shown.output.split())
    assert "1 item run(s), 4 model calls" in words, shown.output  # its task call, and one call of each of 3 judges
    assert ": 1 call, " in words and "1 calls" not in words, shown.output
