"""The done-when of sharding: 400 items as 4 real shard processes (an Indexed Job's JOB_COMPLETION_INDEX), one
killed with SIGKILL half-way and run again, merged into the run an unsharded process makes of the same replies;
one MLflow run, and one experiment of 400 items on the Langfuse test double."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from scoregate.integrations.langfuse.mirror_state import experiment_id_for
from scoregate.store.shards import assign
from support.fake_langfuse import FakeLangfuse
from support.projects import SCOREGATE_BIN, CliResult
from support.scripted_openai import ScriptedOpenAI

ITEMS, SHARDS, KILLED = 400, 4, 1
CASE = re.compile(r"\(case (\d{4})\)")
ROOT_SPAN = "experiment-item-run"


def _write_dataset(project_dir: Path) -> list[str]:
    """400 items made of the 6 smoke items, each title marked `(case NNNN)` so every request (and reply) differs."""
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    base = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = []
    for n in range(ITEMS):
        item = json.loads(json.dumps(base[n % len(base)]))
        item["id"] = f"item-{n:04d}"
        item["input"]["title"] = f"{item['input']['title']} (case {n:04d})"
        rows.append(json.dumps(item))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [f"item-{n:04d}" for n in range(ITEMS)]


def _start_shard(project_dir: Path, index: int, langfuse: dict[str, str]) -> subprocess.Popen[str]:
    env = {**os.environ, **langfuse, "JOB_COMPLETION_INDEX": str(index)}
    args = ["run", "counters", "--shard", "auto", "--shards", str(SHARDS), "--group", "ci-77", "--no-mlflow"]
    args += ["--prompt-source", "local"]
    return subprocess.Popen(
        [str(SCOREGATE_BIN), *args, "-C", str(project_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _summary(path: Path) -> dict[str, Any]:
    summary = dict(json.loads((path / "summary.json").read_text(encoding="utf-8")))
    summary.pop("run_id")  # names the run, not what it measured
    for key in ("runs", "run_ids", "skipped"):  # the stored runs the flaky-item check read: the store's history
        summary.get("flaky", {}).pop(key, None)
    return summary


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0


def _files(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(directory)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_four_shard_processes_one_killed_merge_into_the_unsharded_run(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    mlflow_store: str,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = _write_dataset(project_dir)
    langfuse = fake_langfuse.env()
    split = assign(ids, SHARDS)
    release = threading.Event()

    def hold_the_second_half(body: dict[str, Any]) -> str:
        case = CASE.search(json.dumps(body))
        if case is not None and int(case.group(1)) >= ITEMS // 2:
            release.wait(60)  # the killed shard's first uncached item hangs here until it is killed
        return scripted_server.default_reply(body)

    scripted_server.responder = hold_the_second_half
    warm = scoregate("run", "counters", "--limit", str(ITEMS // 2), "--no-mlflow", "--no-report")
    assert warm.code == 0, warm.output  # replies of the first half cached

    killed = _start_shard(project_dir, KILLED, langfuse)
    deadline = time.monotonic() + 120
    while not any(
        CASE.search(r.text) and int(CASE.search(r.text).group(1)) >= ITEMS // 2 for r in scripted_server.task_requests()
    ):  # type: ignore[union-attr]
        assert killed.poll() is None and time.monotonic() < deadline, killed.communicate()
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    release.set()
    assert killed.returncode == -signal.SIGKILL
    shard_dirs = list(project_dir.glob(f"runs/*/shards/{KILLED}-of-{SHARDS}"))
    assert len(shard_dirs) == 1
    run_dir = shard_dirs[0].parent.parent
    before_kill = [i for i in ids if split[i] == KILLED and int(i[-4:]) < ITEMS // 2]
    assert _lines(shard_dirs[0] / "results.jsonl") == len(before_kill)  # half-way: its first half, kept
    assert 0 < len(before_kill) < ITEMS // SHARDS

    second_warm = scoregate("run", "counters", "--no-mlflow", "--no-report")
    assert second_warm.code == 0, second_warm.output  # now every reply is cached: all runs below read the same
    processes = [_start_shard(project_dir, index, langfuse) for index in range(SHARDS)]  # the killed index runs again
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, out + err
    for index in range(SHARDS):
        assert _lines(run_dir / "shards" / f"{index}-of-{SHARDS}" / "results.jsonl") == ITEMS // SHARDS
    reference = scoregate("run", "counters", "--no-mlflow", "--json")
    assert reference.code == 0, reference.output
    reference_dir = Path(json.loads(reference.out)["directory"])

    for name, value in langfuse.items():
        monkeypatch.setenv(name, value)
    merged = scoregate("merge", run_dir.name)
    assert merged.code == 0, merged.output
    for name in langfuse:
        monkeypatch.delenv(name)
    assert _summary(run_dir) == _summary(reference_dir)
    assert json.loads((run_dir / "summary.json").read_text())["run_metrics"]["items"] == ITEMS

    from mlflow import MlflowClient

    client = MlflowClient(mlflow_store)
    found = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    assert len(found) == 1 and found[0].data.tags["scoregate.run_id"] == run_dir.name
    assert found[0].data.metrics
    assert {k: len(client.get_metric_history(found[0].info.run_id, k)) for k in found[0].data.metrics} == {
        k: 1 for k in found[0].data.metrics
    }

    experiments = fake_langfuse.state.experiments()
    assert list(experiments) == [experiment_id_for(run_dir.name)]
    assert (
        experiments[experiment_id_for(run_dir.name)]["itemIds"]
        and len(fake_langfuse.state.find_spans(ROOT_SPAN)) == ITEMS
    )
    assert [i for i, n in Counter(s["id"] for s in fake_langfuse.state.scores).items() if n > 1] == []
    assert {s["name"] for s in fake_langfuse.state.scores if s.get("datasetRunId")} >= {"verdict"}

    files, db = _files(run_dir), Path(mlflow_store.removeprefix("sqlite:///"))
    db_before = db.stat().st_mtime_ns, db.stat().st_size
    again = scoregate("merge", run_dir.name)
    assert again.code == 0 and "nothing changed" in again.output, again.output
    assert _files(run_dir) == files and (db.stat().st_mtime_ns, db.stat().st_size) == db_before

    for index in (0, 1, 3):  # another run of the same items, shard 2 not there yet
        assert scoregate("run", "counters", "--shard", f"{index}/{SHARDS}", "--run-id", "late-2").code == 0
    incomplete = scoregate("merge", "late-2", "--no-mlflow")
    assert incomplete.code == ExitCode.UNDECIDED, incomplete.output
    assert f"INCOMPLETE: {ITEMS // SHARDS} planned item(s) missing (shards 2-of-{SHARDS} missing)" in incomplete.output
    summary = json.loads((project_dir / "runs" / "late-2" / "summary.json").read_text())
    assert summary["verdict"] == "incomplete" and {g["status"] for g in summary["gates"]} == {"incomplete"}
    assert summary["incomplete"]["missing_items"] == sorted(i for i in ids if split[i] == 2)
    assert scoregate("run", "counters", "--shard", f"2/{SHARDS}", "--run-id", "late-2").code == 0
    complete = scoregate("merge", "late-2", "--no-mlflow")
    assert complete.code == 0, complete.output
    assert _summary(project_dir / "runs" / "late-2") == _summary(reference_dir)
