"""`scoregate run EXPERIMENT --run-id ID`: a run named by its caller (a CI job's id), for any run, sharded or not;
an id that exists already is refused unless resumed, and an id that is not one file name is refused, before any
model request."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def test_a_run_takes_the_id_it_is_given_and_resumes_by_it(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("run", "counters", "--run-id", "ci-4711.1", "--limit", "2", "--no-mlflow")

    assert result.code == 0, result.output
    assert runs.ids() == ["ci-4711.1"]
    assert runs.manifest("ci-4711.1")["run_id"] == "ci-4711.1"
    assert runs.summary("ci-4711.1")["run_id"] == "ci-4711.1"
    assert "run ci-4711.1 (" in result.output
    again = scoregate("run", "--resume", "ci-4711.1", "--no-mlflow")
    assert again.code == 0 and "run ci-4711.1 already finished; nothing to resume" in again.output


def test_an_id_that_exists_is_refused_before_any_model_request(
    scoregate: Callable[..., CliResult], runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "counters", "--run-id", "nightly-7", "--limit", "1", "--no-mlflow").code == 0
    before = runs.results("nightly-7")
    scripted_server.clear_requests()

    again = scoregate("run", "counters", "--run-id", "nightly-7", "--no-mlflow")

    assert again.code == 1, again.output
    assert "run nightly-7 already exists" in again.output
    assert "`scoregate run --resume nightly-7`" in again.output
    assert scripted_server.requests == []  # not even the one-token check
    assert runs.results("nightly-7") == before and runs.ids() == ["nightly-7"]


@pytest.mark.parametrize(
    "hostile",
    ["../escape", "a/b", "/tmp/x", "..", ".hidden", "with space", "tab\there", "new\nline", "", "x" * 300, "é-run",
     "-starts-with-a-dash", "nul\x00byte"],
)  # fmt: skip
def test_an_id_that_is_not_one_file_name_is_refused_before_anything_runs(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    hostile: str,
) -> None:
    result = scoregate("run", "counters", f"--run-id={hostile}", "--no-mlflow")

    assert result.code != 0, result.output
    assert "not a run id" in result.output
    assert "letters, digits" in result.output
    assert scripted_server.requests == []
    assert not (project_dir / "runs").exists() or not any((project_dir / "runs").iterdir())
    assert not (project_dir.parent / "escape").exists() and not (project_dir / "a").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--resume", "r1"), "--resume names the run to continue"),
        (("--models", "scripted"), "--models starts one run per model"),
    ],
)
def test_run_id_with_resume_or_models_is_a_usage_error(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, args: tuple[str, ...], said: str
) -> None:
    result = scoregate("run", "counters", "--run-id", "r2", *args, "--no-mlflow")

    assert result.code == 2, result.output
    assert said in result.output
    assert scripted_server.requests == []
