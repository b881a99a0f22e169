"""Per-call telemetry: metrics.json / metrics.csv hold one row per model call, nulls where no usage, no prompt text."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

JUDGES = ("ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1")


def metrics(runs: Runs, run_id: str) -> dict[str, Any]:
    return dict(json.loads((runs.root / run_id / "metrics.json").read_text(encoding="utf-8")))


def priced(project_dir: Path, edit_yaml: Callable[..., None]) -> None:
    def change(config: dict[str, Any]) -> None:
        config["models"]["scripted"].update(input_cost_per_mtok=1.0, output_cost_per_mtok=2.0)

    edit_yaml(project_dir / "scoregate.yaml", change)


def test_rows_equal_the_model_calls_made_with_retries_counted(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    project_dir: Path,
    edit_yaml: Callable[..., None],
) -> None:
    priced(project_dir, edit_yaml)
    scripted_server.fail_next(503, times=2, retry_after=0)  # the first call is tried three times

    result = scoregate("run", "smoke", "--no-mlflow", "--no-cache", "--concurrency", "1")

    assert result.code == 0, result.output
    run_id = runs.latest()
    data = metrics(runs, run_id)
    rows = data["rows"]
    # One row per call the engine made: the one-token model check, then 6 task calls + 3 judges per item; the
    # retried call is one row. Every request the server received is a row or a retry.
    assert len(rows) == data["calls"] == 1 + len(DATASET_IDS) * (1 + len(JUDGES))
    assert sum(r["retries"] for r in rows) == 2
    requests = len(scripted_server.chat_requests()) + len(scripted_server.preflight_requests())
    assert len(rows) + sum(r["retries"] for r in rows) == requests
    stages = sorted({r["stage"] for r in rows})
    assert stages == sorted(["model_check", "task", *(f"judge:{j}" for j in JUDGES)])
    check = rows[0]
    assert check["stage"] == "model_check" and check["item_id"] is None and check["prompt"] is None
    assert check["model_name"] == "scripted" and check["model"] == "scripted-1" and check["success"] is True
    assert check["tokens_completion"] == 1 and check["cost_usd"] == (check["tokens_prompt"] * 1.0 + 2.0) / 1e6
    task = [r for r in rows if r["stage"] == "task"]
    assert {r["item_id"] for r in task} == set(DATASET_IDS)
    first = task[0]
    assert first["run_id"] == run_id and first["provider"] == "openai" and first["model"] == "scripted-1"
    assert first["prompt"].startswith("summarization-") and "@local-" in first["prompt"]
    assert first["structured_output"] is False and first["schema_name"] is None
    assert first["tokens_total"] == first["tokens_prompt"] + first["tokens_completion"] > 0
    assert first["cost_usd"] == (first["tokens_prompt"] * 1.0 + first["tokens_completion"] * 2.0) / 1e6
    assert first["success"] is True and first["error"] is None and first["cache_hit"] is False
    assert first["duration_ms"] > 0 and first["timestamp"].startswith("20")
    judge = next(r for r in rows if r["stage"] == "judge:ev_faithfulness_v1")
    assert judge["structured_output"] is True and judge["schema_name"]
    assert judge["prompt"] == "ev_faithfulness_v1@v1"
    # No prompt text: not a line of any item's transcript appears in either file.
    text = (runs.root / run_id / "metrics.json").read_text() + (runs.root / run_id / "metrics.csv").read_text()
    for item in (project_dir / "datasets" / "smoke_v1.jsonl").read_text().splitlines():
        assert json.loads(item)["input"]["transcript"][:60] not in text
    with (runs.root / run_id / "metrics.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == len(rows) and table[0]["stage"] == rows[0]["stage"]


def test_tokens_and_cost_are_null_when_the_provider_reports_no_usage(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    project_dir: Path,
    edit_yaml: Callable[..., None],
) -> None:
    priced(project_dir, edit_yaml)
    scripted_server.send_usage = False

    assert scoregate("run", "counters", "--no-mlflow", "--limit", "2").code == 0

    rows = metrics(runs, runs.latest())["rows"]
    assert [r["stage"] for r in rows] == ["model_check", "task", "task"]
    for row in rows:
        assert row["tokens_prompt"] is None and row["tokens_total"] is None and row["cost_usd"] is None
        assert row["success"] is True
    with (runs.root / runs.latest() / "metrics.csv").open(encoding="utf-8") as handle:
        assert all(r["cost_usd"] == "" and r["tokens_total"] == "" for r in csv.DictReader(handle))


def test_failed_calls_and_cache_hits_are_rows(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--limit", "1").code == 0
    scripted_server.fail_next(400, body='{"error": {"message": "bad", "type": "invalid"}}')
    assert scoregate("run", "counters", "--no-mlflow", "--limit", "2").code == 0

    rows = metrics(runs, runs.latest())["rows"]
    by_item = {r["item_id"]: r for r in rows}
    cached, failed = by_item[DATASET_IDS[0]], by_item[DATASET_IDS[1]]
    assert cached["cache_hit"] is True and cached["success"] is True
    assert failed["success"] is False and "HTTP 400" in failed["error"] and failed["tokens_total"] is None


def test_metrics_files_are_mirrored_to_mlflow(
    scoregate: Callable[..., CliResult], runs: Runs, mlflow_store: str
) -> None:
    from mlflow.tracking import MlflowClient

    assert scoregate("run", "counters", "--limit", "2").code == 0

    links = json.loads((runs.root / runs.latest() / "links.json").read_text())
    client = MlflowClient(tracking_uri=mlflow_store)
    names = {a.path for a in client.list_artifacts(links["mlflow_run_id"])}
    assert {"metrics.json", "metrics.csv"} <= names
    local = client.download_artifacts(links["mlflow_run_id"], "metrics.json")
    assert len(json.loads(Path(local).read_text())["rows"]) == 1 + 2  # the model check and the two task calls


RUN_WITH_ONE_THREAD_AT_ITS_END = """
import os, sys
forks = []
sys.addaudithook(lambda event, args: forks.append(os.getpid()) if event == "os.fork" else None)
import scoregate.app.run.run_execution
scoregate.app.run.run_execution.WARM_IMPORTS_AFTER_S = 3600.0  # no import thread: the end of the run is single-threaded
sys.argv = ["scoregate", *sys.argv[1:]]
import scoregate.cli
try:
    scoregate.cli.main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print("forks:", len(forks))
"""


def test_the_telemetry_is_written_by_a_child_process_beside_the_summary_and_is_the_same(
    project_dir: Path, scripted_server: ScriptedOpenAI, runs: Runs
) -> None:
    """After the last item a child process writes metrics.json and metrics.csv while the run computes its summary and
    report (~75 ms at 2,000 items off the command's end on a machine with a second core); the files are those
    the run would write itself."""
    from scoregate.store.run_store import RunStore
    from scoregate.store.telemetry import write_telemetry

    args = ["run", "counters", "--no-mlflow", "--no-cache", "-C", str(project_dir)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITH_ONE_THREAD_AT_ITS_END, *args], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "forks: 1"
    (run_id,) = runs.ids()
    directory = runs.root / run_id
    written = {name: (directory / name).read_bytes() for name in ("metrics.json", "metrics.csv")}
    write_telemetry(RunStore.open(runs.root, run_id))
    assert {name: (directory / name).read_bytes() for name in written} == written
    requests = len(scripted_server.chat_requests()) + len(scripted_server.preflight_requests())
    assert len(json.loads(written["metrics.json"])["rows"]) == requests  # no retry here: a row per request
