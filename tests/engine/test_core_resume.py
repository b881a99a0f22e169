"""Resume: a partial last line is repaired, a changed dataset is refused, a stored result reads back as written.
The kill -9 and Ctrl-C of a real run are in tests/e2e/test_core_resume_processes.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from support.projects import DATASET_IDS, CliResult, Runs
from support.resume_checks import assert_complete_exactly_once, task_requests_per_item
from support.scripted_openai import ScriptedOpenAI


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
