"""`scoregate replay EXPERIMENT --production N` on the Langfuse double with the reference app: the newest production
inputs run through the candidate as a run, the logged outputs as a second run (`compare` pairs them), the pairwise
judge between them in both orders, a trace that cannot be replayed counted against the candidate, personal data
redacted before disk."""

from __future__ import annotations

import json
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
EMAIL = "maria.rossi@example.org"
EditYaml = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def traffic(
    langfuse_env: FakeLangfuse, scripted_server: ScriptedOpenAI, project_dir: Path, edit_yaml: EditYaml
) -> list[str]:
    """Four production requests through the reference app: three replayable (one with an email), one without the
    mapped transcript."""
    edit_yaml(project_dir / "scoregate.yaml", add_live_experiment)
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    inputs = [
        {"title": "Episode A", "transcript": "Host: a database migration took three weeks."},
        {"title": "Episode B", "transcript": f"Host: write to {EMAIL} about the pricing change."},
        {"title": "Episode C", "transcript": "Host: the outage review found a stale cache."},
        {"title": "Only a title"},
    ]
    return [reply.trace_id for reply in send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)]


def _all_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix != ".sqlite")


def test_replay_runs_the_candidate_and_the_logged_outputs_and_counts_a_skipped_trace_as_a_loss(
    scoregate: Callable[..., CliResult], project_dir: Path, traffic: list[str]
) -> None:
    result = scoregate("replay", "live", "--production", "4", "--json")

    assert result.code == 0, result.err
    replay = json.loads(result.out)
    assert replay["items"] == 4  # the trace without a transcript is in the denominator
    assert replay["failed"] == {"not replayed": 1}
    assert replay["losses"] >= 1
    assert replay["wins"] + replay["losses"] + replay["ties"] == 4
    assert replay["prompt"] == "summarization-catchup@1"
    assert replay["ci_low"] <= replay["win_rate"] <= replay["ci_high"]
    assert replay["verdict"] in ("better", "not worse", "worse")
    assert [t for t, _ in replay["skipped"]] == [traffic[3]]
    candidate, logged = replay["candidate_run"], replay["logged_run"]
    ids = {f"prod-{t}" for t in traffic[:3]}
    for run in (candidate, logged):
        rows = [json.loads(line) for line in (project_dir / "runs" / run / "results.jsonl").read_text().splitlines()]
        assert {row["item_id"] for row in rows} == ids
    logged_rows = (project_dir / "runs" / logged / "results.jsonl").read_text()
    assert "[EMAIL]" in logged_rows
    assert EMAIL not in _all_text(project_dir)
    assert (project_dir / "runs" / candidate / "replay.json").is_file()
    assert replay["mirrors"] == {candidate: ["langfuse", "mlflow"], logged: ["langfuse", "mlflow"]}
    assert replay["mirror_errors"] == {}

    compared = scoregate("compare", logged, candidate)
    assert compared.code == 0, compared.err
    assert "3" in compared.out


def test_replay_prints_the_tally_and_the_verdict_in_words(
    scoregate: Callable[..., CliResult], traffic: list[str]
) -> None:
    result = scoregate("replay", "live", "--production", "4")

    assert result.code == 0, result.err
    assert "4 items:" in result.out
    assert "1 not replayed (counted as losses)" in result.out
    assert "verdict:" in result.out


def test_replay_of_an_experiment_without_a_production_entry_is_one_line(
    scoregate: Callable[..., CliResult], langfuse_env: FakeLangfuse
) -> None:
    result = scoregate("replay", "smoke", "--production", "3")

    assert result.code != 0
    assert "has no `production:` entry" in result.err
    assert "Traceback" not in result.err


def test_the_candidate_is_the_prompt_as_the_files_have_it(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, traffic: list[str]
) -> None:
    prompt_file = project_dir / "prompts" / f"{PROMPT}.yaml"
    prompt_file.write_text(prompt_file.read_text().replace("You ", "CANDIDATE-EDIT You ", 1))
    scripted_server.clear_requests()

    result = scoregate("replay", "live", "--production", "3", "--json")

    assert result.code == 0, result.err
    run = json.loads(result.out)["candidate_run"]
    manifest = json.loads((project_dir / "runs" / run / "manifest.json").read_text())
    assert manifest["receipts"]["prompts"][PROMPT]["source"] == "file"
    assert any("CANDIDATE-EDIT" in r.text for r in scripted_server.requests)


def test_a_candidate_item_whose_call_failed_stays_in_the_denominator_as_a_loss(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, traffic: list[str]
) -> None:
    scripted_server.fail_next(400)  # one candidate item: a call error that is not retried

    result = scoregate("replay", "live", "--production", "4", "--json")

    assert result.code == 0, result.err
    replay = json.loads(result.out)
    assert replay["items"] == 4
    assert replay["failed"] == {"not judged": 1, "not replayed": 1}
    assert replay["losses"] >= 2 and replay["wins"] + replay["losses"] + replay["ties"] == 4


def test_a_huge_production_input_is_not_replayed_and_counts_as_a_loss(
    scoregate: Callable[..., CliResult],
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: EditYaml,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", add_live_experiment)
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    inputs = [{"title": "Huge", "transcript": "word " * 220_000}, {"title": "Small", "transcript": "Host: hello."}]
    huge = send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)[0].trace_id
    scripted_server.clear_requests()

    result = scoregate("replay", "live", "--production", "2", "--json")

    assert result.code == 0, result.err
    replay = json.loads(result.out)
    assert replay["items"] == 2 and replay["failed"] == {"not replayed": 1}
    assert [trace for trace, _ in replay["skipped"]] == [huge]
    assert "over the 100,000 an item may have" in replay["skipped"][0][1]
    assert not any("word word word" in r.text for r in scripted_server.requests)  # no model saw it


def test_replay_without_langfuse_says_what_to_set(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    edit_yaml(project_dir / "scoregate.yaml", add_live_experiment)

    result = scoregate("replay", "live", "--production", "3")

    assert result.code != 0
    assert "LANGFUSE_PUBLIC_KEY" in result.err and "Traceback" not in result.err
    assert not (project_dir / "runs").exists() or not any((project_dir / "runs").iterdir())
