"""Exactly once: a run killed with -9 or interrupted with Ctrl-C resumes without losing or repeating an item."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from scoregate.errors import ExitCode
from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]


def titles(project: Path) -> dict[str, str]:
    """Item id → episode title, to tell which item a recorded request was for."""
    lines = (project / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item["input"]["title"] for item in map(json.loads, lines)}


def task_requests_per_item(server: ScriptedOpenAI, project: Path) -> dict[str, int]:
    counts = dict.fromkeys(DATASET_IDS, 0)
    for item_id, title in titles(project).items():
        counts[item_id] = sum(title in r.text for r in server.task_requests())
    return counts


def stored_ids(runs: Runs, run_id: str) -> list[str]:
    return [r["item_id"] for r in runs.results(run_id)]


def assert_complete_exactly_once(runs: Runs, run_id: str) -> None:
    ids = stored_ids(runs, run_id)
    assert sorted(ids) == sorted(DATASET_IDS)  # every item, each exactly once
    assert runs.manifest(run_id)["status"] == "finished"
    assert runs.summary(run_id)["run_metrics"]["items"] == len(DATASET_IDS)


def test_kill_9_then_resume_runs_each_item_exactly_once(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    runs: Runs,
) -> None:
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished_before_kill = stored_ids(runs, run_id)
    assert 2 <= len(finished_before_kill) < len(DATASET_IDS)
    scripted_server.latency_s = 0.0

    result = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert result.code == 0, result.output
    assert_complete_exactly_once(runs, run_id)
    requests = task_requests_per_item(scripted_server, project_dir)
    for item_id in finished_before_kill:
        assert requests[item_id] == 1, f"{item_id} finished before the kill but was asked again"
    assert all(count >= 1 for count in requests.values())


def test_resume_repairs_a_partial_last_line(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-cache", "--no-mlflow").code == 0
    run_id = runs.latest()
    path = runs.root / run_id / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])  # killed while writing item 3

    result = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert result.code == 0, result.output
    assert all(line.endswith("}") for line in path.read_text(encoding="utf-8").splitlines())
    assert_complete_exactly_once(runs, run_id)
    requests = task_requests_per_item(scripted_server, project_dir)
    assert [requests[i] for i in DATASET_IDS] == [1, 1, 2, 2, 2, 2]


def test_ctrl_c_exits_130_with_the_resume_hint_and_keeps_finished_items(
    start_scoregate: Start, scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1)
    # On a loaded machine the other 5 items could all finish before the signal lands: from now on a reply takes
    # longer than the test, so Ctrl-C always meets a run with items left.
    scripted_server.latency_s = 60

    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=30)

    assert process.returncode == ExitCode.INTERRUPTED
    message = " ".join(err.split())
    assert f"run {run_id} interrupted" in message
    assert f"scoregate run --resume {run_id}" in message
    assert "Traceback" not in err
    kept = stored_ids(runs, run_id)
    assert 1 <= len(kept) < len(DATASET_IDS)
    assert f"{len(kept)} finished item(s) are kept" in message
    assert runs.manifest(run_id)["status"] == "interrupted"
    listed = " ".join(scoregate("runs", "list").output.split())
    assert f"{run_id} interrupted" in listed and f"counters on smoke_v1 {len(kept)}/6 items" in listed
    shown = scoregate("runs", "show", run_id)
    assert f"no summary yet: resume with `scoregate run --resume {run_id}`" in shown.output


def test_resume_refuses_when_the_dataset_changed(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow").code == 0
    run_id = runs.latest()
    manifest_path = runs.root / run_id / "manifest.json"  # as if interrupted (a finished run has nothing to resume)
    manifest_path.write_text(json.dumps({**runs.manifest(run_id), "status": "interrupted"}), encoding="utf-8")
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    dataset.write_text(dataset.read_text(encoding="utf-8").replace("Open Models Weekly", "Open Models Daily"))
    scripted_server.clear_requests()

    result = scoregate("run", "--resume", run_id, "--no-mlflow")

    assert result.code == 1
    assert f"cannot resume {run_id}: the dataset changed since the run started" in result.output
    assert "start a new run instead" in result.output
    assert scripted_server.chat_requests() == []
    assert len(runs.results(run_id)) == 2


def test_a_stored_result_reads_back_exactly_as_written() -> None:
    """The shallow writer of results.jsonl keeps every field of the result, its scores and its calls."""
    from dataclasses import asdict

    from scoregate.store.records import CallRecord, ItemResult, Score

    result = ItemResult(
        index=3, item_id="a", prompt="p@local-1", input={"nested": {"x": [1, 2]}}, output="text",
        expected_output={"y": None}, metadata={"k": "v"}, error=None, raw_output=None,
        scores=[Score("s", 4.0, "numeric", "ev", comment="ok"), Score.missing("t", "text", "ev", "why")],
        calls=[CallRecord("task", "m", "http://x", latency_ms=1.5, tokens_in=3, tokens_out=4, retries=1)],
    )  # fmt: skip
    assert result.to_json_dict() == asdict(result)
    assert ItemResult.from_json_dict(result.to_json_dict()) == result


def test_a_resume_keeps_no_cache_as_the_run_recorded_it(
    start_scoregate: Start,
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    runs: Runs,
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0  # every item's reply is in the cache now
    scripted_server.latency_s = 0.4
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    run_id = wait_for_stored_items(process, runs, at_least=1, besides=(runs.latest(),))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = stored_ids(runs, run_id)
    scripted_server.latency_s = 0.0
    scripted_server.clear_requests()

    result = scoregate("run", "--resume", run_id, "--no-mlflow")  # the printed resume command: no --no-cache

    assert result.code == 0, result.output
    assert runs.manifest(run_id)["options"]["cache"] is False
    resumed = [r for r in runs.results(run_id) if r["item_id"] not in kept]
    assert resumed and not any(call["cached"] for r in resumed for call in r["calls"])
    assert len(scripted_server.task_requests()) == len(resumed)
