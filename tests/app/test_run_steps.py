"""The run is a list of steps (`scoregate.app.run.steps`): its order is visible and fixed, a post-run step added to
the list runs after the summary and receives the finished run, and the mirrors a run skips are named by sink
(`--no-mirror NAME`, with `--no-mlflow` / `--no-langfuse` as its aliases)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app import RunOptions, run_experiment
from scoregate.app.run import finish_steps, steps
from scoregate.app.run.canary_step import judge_canary
from scoregate.app.run.cascade_report import cascade_report
from scoregate.app.run.finished_run import FinishedRun
from scoregate.app.run.items import AllItems, ShardItems, StopEarlyItems
from scoregate.app.run.power_step import gate_power
from scoregate.app.run.run_way import choose_items
from scoregate.catalog.plan import plan_experiment
from scoregate.store.shards import Shard
from scoregate.tracks.project import load_project
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
NO_MIRRORS = RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"}))


def test_a_whole_run_ends_with_the_summary_the_report_the_post_run_steps_then_the_mirrors() -> None:
    assert (
        finish_steps.summary_step,
        finish_steps.report_step,
        finish_steps.telemetry_step,
        finish_steps.post_run_step,
        finish_steps.mirror_step,
    ) == steps.FINISH_STEPS
    assert [judge_canary, cascade_report, gate_power] == steps.POST_RUN_STEPS


def test_the_way_a_run_runs_its_items_is_chosen_once_from_its_options(project_dir: Path) -> None:
    plan = plan_experiment(load_project(project_dir), "counters")

    shard = choose_items(plan, RunOptions(sharding=RunOptions.ShardSpec(Shard(0, 2))), None)
    whole = choose_items(plan, RunOptions(), None)

    assert isinstance(shard, ShardItems) and shard.members and len(shard.members) < plan.dataset_scan.count
    assert type(whole) is AllItems and whole.members is None
    assert not isinstance(whole, StopEarlyItems)


def test_a_post_run_step_added_to_the_list_runs_after_the_summary_and_receives_the_finished_run(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str, str, str]] = []

    def count_items(run: FinishedRun) -> None:  # the summary is written when a post-run step runs
        written = json.loads((run.store.directory / "summary.json").read_text(encoding="utf-8"))
        seen.append((written["run_id"], run.result.summary["verdict"], run.plan.name, run.store.manifest_record.status))

    monkeypatch.setattr(steps, "POST_RUN_STEPS", [*steps.POST_RUN_STEPS, count_items])

    outcome = run_experiment(
        project_dir, "counters", RunOptions(selection=RunOptions.Selection(limit=2), mirrors=NO_MIRRORS)
    )

    assert seen == [(outcome.run_id, outcome.verdict, "counters", "finished")]


def test_a_run_without_the_post_run_steps_does_not_call_them(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoregate.app.run.one_run import run_one

    called: list[str] = []
    monkeypatch.setattr(steps, "POST_RUN_STEPS", [lambda run: called.append(run.store.run_id)])

    run_one(
        load_project(project_dir), "counters", RunOptions(selection=RunOptions.Selection(limit=1), mirrors=NO_MIRRORS)
    )

    assert called == []  # a canary's own runs are such runs: no canary of a canary


def test_no_mirror_with_an_unknown_sink_is_a_one_line_usage_error_naming_the_sinks(scoregate: Cli, runs: Runs) -> None:
    result = scoregate("run", "counters", "--limit", "1", "--no-mirror", "bogus")

    assert result.code == 2
    assert "no sink 'bogus'; the sinks are: mlflow, langfuse" in result.output
    assert "--no-mirror" in result.output
    assert runs.ids() == []  # refused before any run starts


def test_no_mirror_mlflow_is_what_no_mlflow_does(scoregate: Cli, runs: Runs, mlflow_store: str) -> None:
    by_name = scoregate("run", "counters", "--limit", "2", "--no-mirror", "mlflow", "--no-report")
    first = runs.latest()
    by_alias = scoregate("run", "counters", "--limit", "2", "--no-mlflow", "--no-report")
    second = runs.latest()

    assert by_name.code == by_alias.code == 0, by_name.output + by_alias.output
    assert first != second
    for run_id, result in ((first, by_name), (second, by_alias)):
        assert runs.manifest(run_id)["options"]["mirrors_off"] == ["mlflow"]
        assert "mlflow: run" not in result.output


def test_no_mirror_is_repeatable_and_joins_the_aliases(scoregate: Cli, runs: Runs) -> None:
    result = scoregate("run", "counters", "--limit", "1", "--no-mirror", "mlflow", "--no-langfuse", "--no-report")

    assert result.code == 0, result.output
    assert runs.manifest()["options"]["mirrors_off"] == ["langfuse", "mlflow"]


def test_a_run_starts_with_the_sinks_the_plan_the_budget_gate_the_models_check_then_the_store() -> None:
    from scoregate.app.run import start_steps

    assert [
        start_steps.sinks_step,
        start_steps.prompts_step,
        start_steps.plan_step,
        start_steps.stop_early_step,
        start_steps.budget_step,
        start_steps.caller_step,
        start_steps.models_check_step,
        start_steps.check_floor_step,
        start_steps.cascade_step,
        start_steps.store_step,
    ] == steps.START_STEPS


def test_the_shard_or_whole_run_choice_is_made_once_and_gives_the_items_way(project_dir: Path) -> None:
    from scoregate.app.run.run_way import ShardRun, WholeRun, choose_way

    plan = plan_experiment(load_project(project_dir), "counters")
    sharded = RunOptions(sharding=RunOptions.ShardSpec(Shard(1, 2)))

    shard, whole = choose_way(sharded), choose_way(RunOptions())

    assert isinstance(shard, ShardRun) and isinstance(whole, WholeRun)
    assert isinstance(shard.items(plan, sharded, None), ShardItems)
    assert type(whole.items(plan, RunOptions(), None)) is AllItems


def test_a_start_step_added_before_the_models_check_refuses_the_run_before_any_model_call(
    scoregate: Cli, runs: Runs, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoregate.app.run import start_steps
    from scoregate.app.run.starting_run import StartingRun
    from scoregate.errors import ScoregateError

    def refuse(run: StartingRun) -> None:  # a new feature's check: it sees the plan made by the steps before it
        raise ScoregateError(f"{run.plan.name}: refused by a start step", hint="drop the test step")

    listed = list(start_steps.START_STEPS)
    listed.insert(listed.index(start_steps.caller_step), refuse)
    monkeypatch.setattr(start_steps, "START_STEPS", listed)

    result = scoregate("run", "counters", "--limit", "2", "--no-mlflow")

    assert result.code == 1, result.output
    assert "counters: refused by a start step" in result.output
    assert "Traceback" not in result.output
    assert scripted_server.requests == []  # not even the models' one-token check
    assert runs.ids() == []  # no item ran: no run was stored
