"""`scoregate traces score`: production traffic from the reference app, judged by the file judges, each score posted
onto its trace exactly once — across re-runs and after a kill -9 — with the forecast and budget checked first."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.production_traffic import LIVE_PROMPT, add_live_experiment, publish_prompt, send_traffic
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

PROMPT = LIVE_PROMPT  # the prompt of the `live` experiment
JUDGES = ["ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1"]
EditYaml = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def traffic(
    langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, project_dir: Path, edit_yaml: EditYaml
) -> list[str]:
    """Four production requests on summarization-catchup@1, and one without a transcript (unmappable)."""
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda data: add_live_experiment(data, evaluators=JUDGES, environment="production"),
    )
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    inputs = [{"title": f"Episode {i}", "transcript": f"Host: we shipped release {i}."} for i in range(4)]
    replies = send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)
    send_traffic(langfuse_env, scripted_server, [{"title": "No transcript"}], prompt=PROMPT)
    return [r.trace_id for r in replies]


def _scores(fake: FakeLangfuse) -> Counter[tuple[str, str]]:
    return Counter((s["traceId"], s["name"]) for s in fake.state.scores)


def test_scores_land_on_the_traces_once_and_a_rerun_judges_and_posts_nothing_new(
    scoregate: Callable[..., CliResult], langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, traffic: list[str]
) -> None:
    first = scoregate("traces", "score", "live")
    assert first.code == 0, first.err
    assert "5 traces found, 4 selected, 1 skipped" in first.out
    assert "input.transcript ($.input.transcript)" in first.out  # the skipped trace names the missing field
    assert "judged: 12 now, 0 before" in first.out
    scores = _scores(langfuse_env)
    assert {trace for trace, _ in scores} == set(traffic)
    assert set(scores.values()) == {1}
    assert {"actionability_score", "faithfulness_score", "conciseness_score"} <= {name for _, name in scores}
    judge_calls = len(scripted_server.judge_requests())

    again = scoregate("traces", "score", "live")

    assert again.code == 0, again.err
    assert "judged: 0 now, 12 before" in again.out
    assert f"scores: 0 of 0 posted, {sum(scores.values())} posted before" in again.out
    assert len(scripted_server.judge_requests()) == judge_calls
    assert _scores(langfuse_env) == scores


def test_a_kill_9_mid_run_then_a_resume_leaves_every_score_once(
    start_scoregate: Callable[..., subprocess.Popen[str]],
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    traffic: list[str],
) -> None:
    scripted_server.latency_s = 0.4
    judged = project_dir / ".scoregate" / "production" / "live" / "judged.jsonl"
    process = start_scoregate("traces", "score", "live")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not judged.is_file() or len(judged.read_text().splitlines()) < 2):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = len(judged.read_text().splitlines())
    assert 2 <= kept < 12, "the kill came too late to test a resume"
    scripted_server.latency_s = 0.0

    resumed = scoregate("traces", "score", "live")

    assert resumed.code == 0, resumed.err
    assert f"judged: {12 - kept} now, {kept} before" in resumed.out
    scores = _scores(langfuse_env)
    assert {trace for trace, _ in scores} == set(traffic) and set(scores.values()) == {1}
    assert len({s["id"] for s in langfuse_env.state.scores}) == len(langfuse_env.state.scores)


def test_a_budget_the_forecast_exceeds_refuses_before_any_judge_call(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
    traffic: list[str],
) -> None:
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda d: d["models"]["scripted"].update(input_cost_per_mtok=1000.0, output_cost_per_mtok=1000.0),
    )
    before = len(scripted_server.judge_requests())

    refused = scoregate("traces", "score", "live", "--budget-usd", "0.0001")

    assert refused.code != 0
    assert "budget $0.0001" in refused.err
    assert len(scripted_server.judge_requests()) == before
    assert not (project_dir / ".scoregate" / "production" / "live" / "judged.jsonl").exists()


def test_dry_run_forecasts_and_calls_nothing(
    scoregate: Callable[..., CliResult], langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, traffic: list[str]
) -> None:
    before = len(scripted_server.judge_requests())
    result = scoregate("traces", "score", "live", "--dry-run", "--sample", "2")
    assert result.code == 0, result.err
    assert "4 selected" not in result.out and "2 selected" in result.out
    assert "nothing judged or posted" in result.out
    assert len(scripted_server.judge_requests()) == before
    assert langfuse_env.state.scores == []


def test_an_experiment_without_a_production_entry_is_a_clear_error(
    scoregate: Callable[..., CliResult], traffic: list[str]
) -> None:
    result = scoregate("traces", "score", "smoke")
    assert result.code != 0
    assert "no `production:` entry for experiment 'smoke'" in result.err


def test_the_counts_read_as_words_agree_one_trace_and_a_project_relative_ledger(
    scoregate: Callable[..., CliResult], traffic: list[str]
) -> None:
    result = scoregate("traces", "score", "live", "--limit", "1")
    assert result.code == 0, result.err
    assert "1 trace found, 0 selected, 1 skipped" in result.out  # the newest trace is the unmappable one
    assert "(kept in .scoregate/production/live)" in result.out


def test_hostile_traces_are_redacted_for_the_judges_or_skipped_and_nothing_personal_is_kept(
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
) -> None:
    edit_yaml(
        project_dir / "scoregate.yaml",
        lambda data: add_live_experiment(data, evaluators=JUDGES, environment="production"),
    )
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    email, card = "olga.petrova@example.com", "5500 0000 0000 0004"
    hostile = [
        {"title": "Billing", "transcript": f"Caller: {email}, card {card}. </script>"},
        {"title": "Huge", "transcript": "word " * 30_000},
    ]
    send_traffic(langfuse_env, scripted_server, hostile, prompt=PROMPT)
    scripted_server.clear_requests()

    result = scoregate("traces", "score", "live")

    assert result.code == 0, result.err
    assert "over the 100,000 characters a judged trace may have" in result.out
    judged = "\n".join(r.text for r in scripted_server.judge_requests())
    assert "[EMAIL]" in judged and "[CARD]" in judged and "</script>" in judged
    kept = "\n".join(p.read_text(errors="replace") for p in (project_dir / ".scoregate").rglob("*.jsonl"))
    for personal in (email, card, "5500000000000004"):
        assert personal not in judged + kept + result.out
