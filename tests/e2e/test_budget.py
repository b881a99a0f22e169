"""`run --budget-usd/--budget-minutes` and `settings.budget`: refuse to start above the forecast's upper end, stop
(interrupted, resumable) when the run's spending or time reaches the budget; bad budgets refused before any call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import support.forecast_runs as test_forecast
from support.forecast_runs import run_cli
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI

priced = test_forecast.priced
"""The test project with its model priced."""

RUN = ("run", "smoke", "--no-mlflow", "--no-report")


def _forecast(project: Path) -> dict[str, Any]:
    return dict(json.loads(run_cli(project, "run", "smoke", "--dry-run", "--json").out))


def test_a_budget_below_the_forecast_upper_end_refuses_to_start_without_a_call(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    high = _forecast(priced)["cost_usd"]["high"]
    refused = run_cli(priced, *RUN, "--budget-usd", f"{high * 0.9:.6f}")
    assert refused.code == 1
    assert "not started: the forecast of 6 item run(s), 24 calls, exceeds the budget: cost" in refused.output
    assert f"up to ${high:.4f} (95% interval) > budget" in refused.output
    assert "forecast from prompt lengths and max_tokens" in refused.output
    assert scripted_server.requests == [] and runs.ids() == []
    started = run_cli(priced, *RUN, "--budget-usd", f"{high * 1.1:.6f}")
    assert started.code == 0, started.output
    assert len(runs.ids()) == 1


def test_settings_budget_is_the_default_and_the_option_wins(
    priced: Path,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    edit_yaml(priced / "scoregate.yaml", lambda c: c["settings"].update(budget={"usd": 0.000001}))
    refused = run_cli(priced, *RUN)
    assert refused.code == 1 and "exceeds the budget" in refused.output and "> budget $0.0000" in refused.output
    assert scripted_server.requests == [] and runs.ids() == []
    assert run_cli(priced, *RUN, "--budget-usd", "100").code == 0


def test_time_budget_without_past_runs_starts_then_stops_interrupted_and_resumes(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    # each item: four calls in a row, about a second; the run: about 3 s. The models' check answers at once, so
    # the floor it sets (24 calls at least as long as it) stays under the budget and the run starts.
    scripted_server.delay_next(0.25, times=1000)
    stopped = run_cli(priced, *RUN, "--budget-minutes", "0.02")
    assert stopped.code == 1, stopped.output
    assert "the wall time cannot be forecast without past runs" in stopped.output
    run_id = runs.latest()
    assert f"run {run_id} stopped at its budget: took" in stopped.output
    assert f"scoregate run --resume {run_id}" in stopped.output
    manifest = runs.manifest(run_id)
    assert manifest["status"] == "interrupted" and manifest["stopped_because"].startswith("budget: took")
    kept = {r["item_id"] for r in runs.results(run_id)}
    assert 0 < len(kept) < 6
    scripted_server.clear_faults()
    resumed = run_cli(priced, "run", "--resume", run_id, "--no-mlflow", "--no-report")
    assert resumed.code == 0, resumed.output
    assert runs.manifest(run_id)["status"] == "finished"
    assert len({r["item_id"] for r in runs.results(run_id)}) == 6


def test_spending_that_overtakes_the_budget_stops_the_run_resumably(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert run_cli(priced, *RUN, "--no-cache").code == 0  # the past: short replies
    high = _forecast(priced)["cost_usd"]["high"]
    long_reply = "word " * 20_000  # now every reply is long: the spending overtakes the forecast
    scripted_server.responder = lambda body: long_reply
    stopped = run_cli(priced, *RUN, "--no-cache", "--budget-usd", f"{high * 1.5:.6f}")
    assert stopped.code == 1, stopped.output
    run_id = runs.latest()
    assert f"run {run_id} stopped at its budget: spent $" in stopped.output
    assert runs.manifest(run_id)["status"] == "interrupted"
    spent = sum(c["cost_usd"] for r in runs.results(run_id) for c in r["calls"])
    assert spent >= high * 1.5
    assert len(runs.results(run_id)) < 6


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--budget-usd", "0"), "0: a budget must be more than 0"),
        (("--budget-usd", "-5"), "-5: a budget must be more than 0"),
        (("--budget-minutes", "0"), "0: a budget must be more than 0"),
        (("--budget-eur", "5"), "No such option: --budget-eur"),
        (("--budget-usd", "lots"), "Invalid value for '--budget-usd'"),
    ],
)
def test_bad_budget_options_are_refused_before_any_call(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs, args: tuple[str, ...], said: str
) -> None:
    refused = run_cli(priced, *RUN, *args)
    assert refused.code == 2
    assert said in refused.output
    assert scripted_server.requests == [] and runs.ids() == []


def test_a_zero_budget_in_scoregate_yaml_is_a_clear_error(
    priced: Path,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    edit_yaml(priced / "scoregate.yaml", lambda c: c["settings"].update(budget={"minutes": 0}))
    refused = run_cli(priced, *RUN)
    assert refused.code != 0
    assert "settings.budget.minutes" in refused.output and "greater than 0" in refused.output
    assert scripted_server.requests == [] and runs.ids() == []


def test_a_time_budget_under_a_minute_is_refused_in_seconds_not_zero_minutes(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.latency_s = 0.25  # the past: each item's four calls take about a second
    assert run_cli(priced, *RUN, "--no-cache").code == 0
    scripted_server.clear_requests()

    refused = run_cli(priced, *RUN, "--no-cache", "--budget-minutes", "0.01")

    assert refused.code == 1, refused.output
    assert re.search(
        r"wall time \d+\.\d s expected, up to \d+\.\d s \(95% interval\) > budget 0\.01 min \(0\.6 s\)", refused.output
    ), refused.output
    assert "0.0 min" not in refused.output
    assert scripted_server.requests == []


def test_a_first_run_with_a_time_budget_hears_the_floor_the_model_check_sets(
    priced: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    from support.scripted_openai import PREFLIGHT

    scripted_server.delay_next(1.0, path=PREFLIGHT)  # the one-token check takes a second: no call takes less
    refused = run_cli(priced, *RUN, "--budget-minutes", "0.05")
    assert refused.code == 1, refused.output
    assert "the wall time cannot be forecast without past runs" in refused.output
    floor = re.search(
        r"wall time (\d+\.\d) s or more \(rough: 24 calls, each about as long as the model check's one-token reply "
        r"\(\d+\.\d s\) or longer, 2 in parallel\)",
        refused.output,
    )
    assert floor and 24 * 1.0 / 2 <= float(floor.group(1)) <= 24 * 3.0 / 2, refused.output
    assert "not started" in refused.output and "> budget 0.05 min (3.0 s)" in refused.output
    assert runs.ids() == [] and len(scripted_server.requests) == 1  # the check alone

    started = run_cli(priced, *RUN, "--budget-minutes", "5")
    assert started.code == 0, started.output
    assert "(rough: 24 calls, each about as long as the model check's one-token reply" in started.output
