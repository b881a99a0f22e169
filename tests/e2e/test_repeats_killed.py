"""`run --repeat K` killed with -9 mid-run: the resume runs each (item, repeat) exactly once."""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable

from support.projects import DATASET_IDS, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI
from support.stored_items import stored_keys

Start = Callable[..., "subprocess.Popen[str]"]


def test_a_killed_repeated_run_resumes_each_repeat_exactly_once(
    start_scoregate: Start, scripted_server: ScriptedOpenAI, scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    scripted_server.latency_s = 0.3
    process = start_scoregate("run", "counters", "--no-mlflow", "--no-cache", "--repeat", "2")
    deadline = time.monotonic() + 60
    run_id = None
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        ids = runs.ids()
        if ids and (path := runs.root / ids[0] / "results.jsonl").is_file() and path.read_bytes().count(b"\n") >= 8:
            run_id = ids[0]
            break
        time.sleep(0.05)
    assert run_id is not None
    process.kill()
    process.wait()
    stored_before = stored_keys(runs, run_id)
    assert {r for _i, r in stored_before} == {1, 2}  # killed inside repeat 2
    scripted_server.latency_s = 0.0
    scripted_server.clear_requests()

    result = scoregate("run", "--resume", run_id, "--no-mlflow")

    assert result.code == 0, result.output
    after = stored_keys(runs, run_id)
    assert sorted(after) == sorted(itertools.product(DATASET_IDS, (1, 2)))  # each (item, repeat) exactly once
    assert len(scripted_server.task_requests()) == 12 - len(stored_before)
    assert runs.summary(run_id)["repeats"]["items_complete"] == len(DATASET_IDS)
