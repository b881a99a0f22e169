"""A run's start: a resumed run's lock comes first, so a second resume of a run the real executable is running is
refused before any model check."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from scoregate.errors import ExitCode
from support.projects import CliResult, Runs
from support.scripted_openai import PREFLIGHT, ScriptedOpenAI
from support.stored_items import wait_for_stored_items

Start = Callable[..., "subprocess.Popen[str]"]


def test_a_second_resume_of_a_running_run_is_refused_before_any_model_check(
    scoregate: Callable[..., CliResult], start_scoregate: Start, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.latency_s = 0.3
    process = start_scoregate("run", "counters", "--no-cache", "--no-mlflow")
    try:
        run_id = wait_for_stored_items(process, runs, at_least=1)
        checks_before = len(scripted_server.preflight_requests())
        scripted_server.delay_next(30.0, path=PREFLIGHT)  # a model check now would hang the second command

        started = time.monotonic()
        second = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

        assert second.code == int(ExitCode.ERROR), second.output
        assert f"run {run_id} is in use by process {process.pid}" in second.output
        assert time.monotonic() - started < 10
        assert len(scripted_server.preflight_requests()) == checks_before
    finally:
        process.kill()
        process.wait()
