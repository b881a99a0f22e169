"""Fail early, with the reason: key variables, one real request per endpoint, busy vs down, no-success runs,
consecutive refusals, and `--models` checked before the first run."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from scoregate.providers import local_server
from support.ports import free_port
from support.projects import CliResult, Runs
from support.scripted_openai import PREFLIGHT, ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def assert_stopped_before_the_run(result: CliResult, server: ScriptedOpenAI, runs: Runs, *phrases: str) -> None:
    assert result.code == int(ExitCode.ERROR), result.output
    for phrase in phrases:
        assert phrase in result.output, f"{phrase!r} not in {result.output!r}"
    assert server.chat_requests() == []  # no item was sent
    assert runs.ids() == []  # and no run directory was made


def test_an_unset_api_key_variable_names_the_model_and_the_variable(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(api_key_env="SCRIPTED_KEY"))
    monkeypatch.setenv("SCRIPTED_KEY", "")

    result = scoregate("run", "counters", "--no-mlflow")

    assert_stopped_before_the_run(
        result, scripted_server, runs, "model 'scripted': its API key variable SCRIPTED_KEY is not set",
        "models.scripted.api_key_env", "export SCRIPTED_KEY=",
    )  # fmt: skip
    assert scripted_server.preflight_requests() == []


def test_a_base_url_with_a_wrong_path_is_stopped_by_the_one_token_request(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    wrong = scripted_server.url.removesuffix("/v1") + "/api"
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(base_url=wrong))

    result = scoregate("run", "counters", "--no-mlflow")

    assert_stopped_before_the_run(
        result, scripted_server, runs, f"model 'scripted': {wrong} refused a one-token test request: HTTP 404",
        "no route POST /api/chat/completions", "check base_url",
    )  # fmt: skip


def test_a_401_at_preflight_stops_with_the_servers_words(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(401, path=PREFLIGHT, body='{"error": {"message": "Incorrect API key provided"}}')

    result = scoregate("run", "counters", "--no-mlflow")

    assert_stopped_before_the_run(result, scripted_server, runs, "HTTP 401", "Incorrect API key provided")
    assert len(scripted_server.preflight_requests()) == 1


def test_a_busy_local_server_is_told_apart_from_a_stopped_one(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(scripted_server.port))
    local = {"provider": "local", "model": "smollm2-135m", "timeout_s": 1}
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(local=local))
    scripted_server.latency_s = 6.0  # up, accepting connections, answering nothing in time

    result = scoregate("run", "counters", "--model", "local", "--no-mlflow")

    assert_stopped_before_the_run(result, scripted_server, runs, "the server is up but busy", "running but busy")
    assert "cannot reach" not in result.output
    assert "scoregate model serve" not in result.output


def test_a_run_in_which_no_item_succeeded_exits_1(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.fail_next(400, times=100)  # every item: a non-retryable error that does not stop the run

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == int(ExitCode.ERROR), result.output
    assert f"no item of run {runs.latest()} succeeded" in result.output
    assert runs.manifest()["status"] == "finished"


def test_consecutive_401s_stop_the_run_early(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs, project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["settings"].update(max_consecutive_failures=2))
    scripted_server.fail_next(401, times=100)  # the key was revoked after the preflight

    result = scoregate("run", "counters", "--no-mlflow")

    assert result.code == int(ExitCode.INTERRUPTED), result.output
    assert "stopped early: 2 calls in a row failed, the last with: HTTP 401" in result.output
    assert len(runs.results()) == 2  # concurrency 1: the run stopped at the second refusal
    assert len(scripted_server.task_requests()) == 2  # 401 is not retried
    assert runs.manifest()["status"] == "interrupted"


def test_models_checks_every_name_before_the_first_run(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    result = scoregate("run", "counters", "--models", "scripted,nosuch", "--no-mlflow")

    assert result.code == int(ExitCode.ERROR), result.output
    assert "--models: no model 'nosuch' under `models:` in scoregate.yaml (defined: scripted)" in result.output
    assert "experiments." not in result.output
    assert runs.ids() == []
    assert scripted_server.requests == []


def test_a_local_server_still_loading_is_told_apart_from_a_stopped_one(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(local={"provider": "local", "model": "m"}))
    monkeypatch.setenv("XDG_STATE_HOME", str(project_dir.parent / "state"))
    # Where `model serve` records the server it started on that port: a live process that does not listen yet.
    (local_server.state_dir(port) / "server.pid").write_text(str(os.getpid()))

    result = scoregate("run", "counters", "--model", "local", "--no-mlflow")

    assert_stopped_before_the_run(
        result, scripted_server, runs, f"the local model server (pid {os.getpid()}) is running but does not accept",
        "still loading",
    )  # fmt: skip
    assert "scoregate model serve" not in result.output


def test_an_openai_model_pointed_at_the_embedded_server_gets_its_hints(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    served = {"provider": "openai", "model": "smollm2-135m", "base_url": f"http://127.0.0.1:{port}/v1"}
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(llama=served))

    result = scoregate("run", "counters", "--model", "llama", "--no-mlflow")

    assert_stopped_before_the_run(
        result, scripted_server, runs, f"model 'llama': cannot reach http://127.0.0.1:{port}/v1",
        "start the local model with `scoregate model serve`",
    )  # fmt: skip
    assert "OPENAI_BASE_URL" not in result.output
