"""An item's evaluators run side by side, bounded by the model's max_connections, results in evaluator order."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

JUDGES = ("ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1")
LATENCY_S = 0.6
EditYaml = Callable[[Path, Callable[[Any], None]], None]


def _judge_arrivals(server: ScriptedOpenAI) -> list[float]:
    return sorted(r.at for r in server.judge_requests())


def test_an_items_judges_are_called_at_once_not_one_after_another(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.latency_s = LATENCY_S

    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "1").code == 0

    arrivals = _judge_arrivals(scripted_server)
    assert len(arrivals) == 3
    # One after another, each judge would wait for the previous reply (>= LATENCY_S apart).
    assert arrivals[-1] - arrivals[0] < LATENCY_S / 2
    item = runs.results()[0]
    judge_calls = [c for c in item["calls"] if c["purpose"] != "task"]
    assert len(judge_calls) == 3 and all(c["error"] is None for c in judge_calls)


def test_max_connections_bounds_the_judges_in_flight(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(max_connections=2))
    scripted_server.latency_s = LATENCY_S

    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "1").code == 0

    first, second, third = _judge_arrivals(scripted_server)
    assert second - first < LATENCY_S / 2  # two connections: two judges at once
    assert third - first >= LATENCY_S * 0.9  # the third waits for a free connection


def test_scores_and_calls_stay_in_evaluator_order_when_a_later_judge_answers_first(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    default = scripted_server.default_reply

    def slow_first_judge(body: dict[str, Any]) -> str:
        if "ACTIONABILITY" in str(body.get("messages")):
            time.sleep(LATENCY_S)
        return default(body)

    scripted_server.responder = slow_first_judge

    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "1").code == 0

    item = runs.results()[0]
    evaluators = list(dict.fromkeys(s["evaluator"] for s in item["scores"]))
    assert evaluators[:4] == ["counters_v1", *JUDGES]
    judge_calls = [c for c in item["calls"] if c["purpose"] != "task"]
    assert judge_calls[0]["latency_ms"] >= LATENCY_S * 900  # the slow one is recorded first, as configured
    assert all(c["latency_ms"] < LATENCY_S * 900 for c in judge_calls[1:])


def test_a_failing_judge_yields_nulls_with_reasons_while_the_others_are_measured(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    default = scripted_server.default_reply

    def broken_faithfulness(body: dict[str, Any]) -> str:
        return "not json at all" if "FAITHFULNESS" in str(body.get("messages")) else default(body)

    scripted_server.responder = broken_faithfulness

    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "1").code == 0

    scores = runs.results()[0]["scores"]
    faithfulness = [s for s in scores if s["evaluator"] == "ev_faithfulness_v1"]
    others = [s for s in scores if s["evaluator"] in ("ev_actionability_v1", "ev_conciseness_v1")]
    assert faithfulness and all(s["value"] is None and s["reason"] for s in faithfulness)
    assert others and all(s["value"] is not None for s in others if s["data_type"] == "numeric")


def test_the_local_model_gets_two_calls_at_a_time_unless_max_connections_says_otherwise(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """llama.cpp answers one request at a time: the judges of an item queue here, not inside their timeout."""
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(scripted_server.port))  # the "local server" is the scripted one

    def to_local(config: Any) -> None:
        config["models"]["scripted"] = {"provider": "local", "model": "scripted-1", "timeout_s": 5}

    edit_yaml(project_dir / "scoregate.yaml", to_local)
    scripted_server.latency_s = LATENCY_S

    assert scoregate("run", "smoke", "--no-mlflow", "--no-langfuse", "--limit", "1").code == 0

    first, second, third = _judge_arrivals(scripted_server)
    assert second - first < LATENCY_S / 2 and third - first >= LATENCY_S * 0.9
