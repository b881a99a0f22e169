"""`scoregate run EXPERIMENT --shard I/N`: which shard a process is, which items it runs, where it stores them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.run.shards import derive_run_id, divide_budget, parse_shard
from scoregate.errors import ScoregateError
from scoregate.store.shards import Shard, assign
from scoregate.tracks.project import load_project
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI


def test_shard_i_of_n_and_its_errors() -> None:
    assert parse_shard("1/4", env={}) == Shard(1, 4)
    with pytest.raises(ScoregateError, match=r"shard index 4 .* out of range for 4 shards"):
        parse_shard("4/4", env={})
    with pytest.raises(ScoregateError, match="expected I/N"):
        parse_shard("1", env={})
    with pytest.raises(ScoregateError, match="not a number of shards"):
        parse_shard("1/x", env={})


def test_shard_auto_reads_the_kubernetes_index_and_a_count() -> None:
    assert parse_shard("auto", shards=4, env={"JOB_COMPLETION_INDEX": "3"}) == Shard(3, 4)
    assert parse_shard("auto", env={"JOB_COMPLETION_INDEX": "0", "SCOREGATE_SHARDS": "2"}) == Shard(0, 2)
    with pytest.raises(ScoregateError, match="no shard count was given"):
        parse_shard("auto", env={"JOB_COMPLETION_INDEX": "1"})
    with pytest.raises(ScoregateError, match=r"shard index 5 \(from JOB_COMPLETION_INDEX/--shards\) is out of range"):
        parse_shard("auto", shards=4, env={"JOB_COMPLETION_INDEX": "5"})
    with pytest.raises(ScoregateError, match="neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set"):
        parse_shard("auto", env={})


def test_shard_auto_reads_a_slurm_array() -> None:
    env = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"}
    assert parse_shard("auto", env=env) == Shard(2, 3)  # --array=1-3: task 3 is the third shard
    with pytest.raises(ScoregateError, match="SLURM_ARRAY_TASK_COUNT is not"):
        parse_shard("auto", env={"SLURM_ARRAY_TASK_ID": "0"})


@pytest.mark.parametrize("items", [1000, 1003, 20_000])
@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_items_are_split_within_5_percent_and_the_split_is_stable(items: int, count: int) -> None:
    ids = [f"item-{n:06d}" for n in range(items)]
    split = assign(ids, count)
    sizes = [sum(1 for shard in split.values() if shard == k) for k in range(count)]
    assert sum(sizes) == items
    assert all(abs(size - items / count) <= 0.05 * items / count for size in sizes), sizes
    assert assign(list(reversed(ids)), count) == split  # the order of the dataset does not move an item


def test_the_run_id_is_the_same_for_every_shard_and_differs_per_group() -> None:
    one = derive_run_id("smoke", "plan", "data", "ci-123")
    assert one == derive_run_id("smoke", "plan", "data", "ci-123")
    assert one.startswith("smoke-shards-")
    assert derive_run_id("smoke", "plan", "data", "ci-124") != one
    assert derive_run_id("smoke", "plan", "data2", "ci-123") != one


def test_the_connection_budget_is_divided_unless_the_settings_say_whole(
    project_dir: Path, edit_yaml: Callable[..., None]
) -> None:
    project = load_project(project_dir)
    divide_budget(project, 3)
    assert project.config.models["scripted"].max_connections == 2  # 4 / 3, rounded up
    edit_yaml(project_dir / "scoregate.yaml", lambda data: data["settings"].update(shard_budget="whole"))
    project = load_project(project_dir)
    divide_budget(project, 3)
    assert project.config.models["scripted"].max_connections == 4


def _shard_dirs(project_dir: Path) -> list[Path]:
    return sorted(project_dir.glob("runs/*/shards/*"))


def _item_ids(directory: Path) -> list[str]:
    lines = (directory / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["item_id"] for line in lines]


def test_each_shard_runs_its_own_items_into_its_own_directory_and_writes_no_run_level_files(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI, mlflow_store: str
) -> None:
    first = scoregate("run", "counters", "--shard", "0/2", "--group", "ci-1")
    assert first.code == 0, first.output
    second = scoregate("run", "counters", "--shard", "1/2", "--group", "ci-1")
    assert second.code == 0, second.output
    dirs = _shard_dirs(project_dir)
    assert [d.name for d in dirs] == ["0-of-2", "1-of-2"]
    run_dir = dirs[0].parent.parent
    assert dirs[1].parent.parent == run_dir and run_dir.name.startswith("counters-shards-")
    assert f"scoregate merge {run_dir.name}" in first.output
    zero, one = _item_ids(dirs[0]), _item_ids(dirs[1])
    assert len(zero) == len(one) == 3 and not set(zero) & set(one)
    assert sorted(zero + one) == sorted(assign(zero + one, 2))  # every item of the dataset, once
    for directory in dirs:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["shard"]["run_id"] == run_dir.name
        assert (directory / "metrics.json").is_file()  # per-call telemetry of the shard
        assert not (directory / "summary.json").exists()
    assert not (run_dir / "summary.json").exists() and not (run_dir / "manifest.json").exists()
    from mlflow import MlflowClient

    client = MlflowClient(mlflow_store)
    assert [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])] == []


def test_a_shard_builds_its_plan_once_even_when_the_plan_derives_its_run_id(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    mlflow_store: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import scoregate.app.run.start_steps as start_steps
    import scoregate.catalog.plan as catalog_plan

    built: list[str] = []
    real = catalog_plan.plan_experiment

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog_plan, "plan_experiment", counting)
    monkeypatch.setattr(start_steps, "plan_experiment", counting)
    derived = scoregate("run", "counters", "--shard", "0/2", "--group", "ci-1")
    assert derived.code == 0, derived.output
    assert built == ["counters"]  # the plan that derived the run id is the plan the shard ran
    run_id = _shard_dirs(project_dir)[0].parent.parent.name
    given = scoregate("run", "counters", "--shard", "1/2", "--run-id", run_id)
    assert given.code == 0, given.output
    assert built == ["counters", "counters"]


def test_a_rerun_of_a_finished_shard_calls_no_model_and_a_killed_one_resumes_its_own_items(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "counters", "--shard", "1/2", "--no-mlflow", "--no-cache").code == 0
    directory = _shard_dirs(project_dir)[0]
    done = _item_ids(directory)
    scripted_server.clear_requests()
    again = scoregate("run", "counters", "--shard", "1/2", "--no-mlflow", "--no-cache")
    assert again.code == 0, again.output
    assert scripted_server.requests == []  # not even the one-token model check
    assert "already finished; no model was called" in again.output and "scoregate merge" in again.output
    assert _item_ids(directory) == done
    lines = (directory / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (directory / "results.jsonl").write_text(lines[0] + lines[1][:20], encoding="utf-8")  # killed mid-write
    resumed = scoregate("run", "counters", "--shard", "1/2", "--no-mlflow", "--no-cache")
    assert resumed.code == 0, resumed.output
    assert len(scripted_server.task_requests()) == 2
    assert sorted(_item_ids(directory)) == sorted(done)


def test_shard_options_are_checked_before_any_model_call(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out_of_range = scoregate("run", "counters", "--shard", "2/2")
    assert (
        out_of_range.code != 0
        and "shard index 2 (from --shard 2/2) is out of range for 2 shards" in out_of_range.output
    )
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID", raising=False)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    monkeypatch.delenv("SCOREGATE_SHARDS", raising=False)
    no_count = scoregate("run", "counters", "--shard", "auto")
    assert no_count.code != 0 and "no shard count was given" in no_count.output
    orphan = scoregate("run", "counters", "--group", "ci-1")
    assert orphan.code != 0 and "add --shard" in orphan.output
    assert scripted_server.requests == []
    assert not (project_dir / "runs").exists() or not any((project_dir / "runs").iterdir())


def test_shard_auto_in_an_indexed_job(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "2")
    monkeypatch.setenv("SCOREGATE_SHARDS", "3")
    result = scoregate("run", "counters", "--shard", "auto", "--run-id", "nightly-42", "--no-mlflow")
    assert result.code == 0, result.output
    directory = project_dir / "runs" / "nightly-42" / "shards" / "2-of-3"
    assert len(_item_ids(directory)) == 2


def test_retry_errors_redoes_a_shards_failed_items_and_the_merge_takes_the_newest(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.fail_next(500, times=3)  # the shard's first item fails after its retries
    first = scoregate("run", "counters", "--shard", "0/2", "--run-id", "r-1", "--no-mlflow")
    assert first.code == 0, first.output
    assert "1 failed" in first.output
    directory = project_dir / "runs" / "r-1" / "shards" / "0-of-2"
    retried = scoregate("run", "counters", "--shard", "0/2", "--run-id", "r-1", "--no-mlflow", "--retry-errors")
    assert retried.code == 0, retried.output
    assert "0 failed" in retried.output
    assert len(_item_ids(directory)) == 4  # the failed record stays as history; the newest succeeded
    assert scoregate("run", "counters", "--shard", "1/2", "--run-id", "r-1", "--no-mlflow").code == 0
    merged = scoregate("merge", "r-1", "--no-mlflow")
    assert merged.code == 0, merged.output
    summary = json.loads((project_dir / "runs" / "r-1" / "summary.json").read_text(encoding="utf-8"))
    assert summary["run_metrics"]["items"] == 6 and summary["run_metrics"]["error_count"] == 0


def test_a_shard_in_use_is_refused(scoregate: Callable[..., CliResult], project_dir: Path) -> None:
    import os

    from scoregate.store.lock import RunLock

    assert scoregate("run", "counters", "--shard", "0/2", "--run-id", "l-1", "--no-mlflow").code == 0
    directory = project_dir / "runs" / "l-1" / "shards" / "0-of-2"
    with RunLock(directory):
        again = scoregate("run", "counters", "--shard", "0/2", "--run-id", "l-1", "--no-mlflow")
    assert again.code != 0 and f"run 0-of-2 is in use by process {os.getpid()}" in again.output


def test_a_stopped_shard_says_how_to_resume_it(
    start_scoregate: Callable[..., Any], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    import signal
    import time

    scripted_server.delay_next(30, times=10)
    process = start_scoregate("run", "counters", "--shard", "1/2", "--run-id", "t-1", "--no-mlflow")
    deadline = time.monotonic() + 60
    while not scripted_server.task_requests():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 143
    text = " ".join(err.split())
    assert "shard 1-of-2 of run t-1 terminated (SIGTERM)" in text
    assert "resume with `scoregate run counters --shard 1/2 --run-id t-1`" in text


def test_planned_ids_are_the_ids_the_run_gives_its_items(tmp_path: Path) -> None:
    from scoregate.app.run.shards import planned_ids
    from scoregate.catalog.datasets import iter_items

    path = tmp_path / "d.jsonl"
    rows = ['{"id": "a", "input": {"x": 1}}', "", '{"input": {"x": 2}}', '{"id": "é\\"q", "input": {"x": 3}}']
    path.write_text("\ufeff" + "\n".join(rows) + "\n", encoding="utf-8")
    expected = [str(item.id) for _line, item in iter_items(path)]
    assert planned_ids(path, None) == expected and len(expected) == 3
    assert planned_ids(path, 2) == expected[:2]
