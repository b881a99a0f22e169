"""What `validate`, `runs list`, `runs show` and usage errors print, and their exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.errors import ExitCode
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def test_validate_reports_each_experiment_and_dataset_without_calling_a_model(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("validate")

    assert result.code == 0
    assert "ok experiment smoke: 6 items, prompts ok, gates ok" in result.output
    assert "ok experiment counters: 6 items, prompts ok, gates ok" in result.output
    assert "ok dataset smoke_v1: 6 items" in result.output
    assert scripted_server.requests == []


def test_runs_list_shows_every_run_newest_first(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    empty = scoregate("runs", "list")  # an empty store says so, not an error
    assert empty.code == 0 and "no runs yet" in empty.output
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    counters_run = runs.latest()
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    smoke_run = runs.latest()

    result = scoregate("runs", "list")

    assert result.code == 0
    # each run names its model (from scoregate.yaml), prompt versions, dataset, items, primary metric, verdict
    versions = ", ".join(f"{n}@{v}" for n, v in runs.summary(smoke_run)["prompts"].items())
    assert f"{smoke_run} pass finished" in result.output
    assert f"scripted · {versions} smoke on smoke_v1 6/6 items primary " in result.output
    assert f"{counters_run} pass finished" in result.output
    assert "counters on smoke_v1 6/6 items primary required_sections_present mean 1" in result.output
    assert result.output.index(smoke_run) < result.output.index(counters_run)


def test_runs_show_prints_receipts_scores_gates_and_verdict(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    run_id = runs.latest()
    versions = runs.summary()["prompts"]

    result = scoregate("runs", "show", run_id)

    assert result.code == 0
    assert f"run {run_id} status finished experiment smoke" in result.output
    for name, version in versions.items():
        assert f"{name}@{version}" in result.output
    assert f"model scripted (scripted-1 @ {scripted_server.url})" in result.output  # the name in scoregate.yaml
    assert "│ faithfulness_score ↑ │ 5 │ [5, 5] │ 6/6 │" in result.output
    assert "│ hallucination_count ↓ │ 0 │ [0, 0] │ 6/6 │" in result.output
    assert "│ word_count · │" in result.output
    assert "│ hallucinations_per_summary │ 0 │ PASS │" in result.output  # the rule and detail below it
    assert "│ every_item(hallucination_count) <= 1 │ │ │ │ 0 of 6 items break <= 1 │" in result.output
    assert "verdict: PASS" in result.output
    shown = scoregate("runs", "show", run_id, "--json")
    assert json.loads(shown.out) == runs.summary()


def test_runs_show_of_an_unknown_run_says_how_to_list_runs(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("runs", "show", "nope")

    assert result.code == 1
    assert "error: no run 'nope'" in result.output
    assert "list runs with `scoregate runs list`" in result.output


def test_run_of_an_unknown_experiment_lists_the_defined_ones(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI
) -> None:
    result = scoregate("run", "smok", "--no-mlflow")

    assert result.code == 1
    assert "experiments: no experiment 'smok' (defined: counters, smoke)" in result.output
    assert scripted_server.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "smoke", "--bogus"), "No such option: --bogus"),  # `run` alone lists the experiments (issue 12)
        (("run", "smoke", "--limit", "0"), "Invalid value for '--limit'"),
        (("runs", "bogus"), "No such command 'bogus'"),
    ],
    ids=["unknown-option", "bad-option", "unknown-command"],
)
def test_usage_errors_exit_2_with_the_usage_line(
    args: tuple[str, ...], message: str, scoregate: Callable[..., CliResult]
) -> None:
    result = scoregate(*args)

    assert result.code == ExitCode.USAGE
    assert "Usage: scoregate" in result.output
    assert message in result.output


def test_outside_a_project_the_error_says_where_to_run(scoregate: Callable[..., CliResult], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()

    result = scoregate("validate", project=empty)

    assert result.code == 1
    assert f"no scoregate.yaml found in {empty}" in result.output
    assert "pass --project PATH" in result.output
