"""What counts as promotion evidence: a finished run of the whole dataset, on the model the experiment runs on.

Real runs of the test project on the scripted server, mirrored to a real MLflow store; `scoregate promote
--dry-run` without Langfuse reads them back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, Runs, canned_model
from scoregate.errors import ExitCode
from scripted_openai import ScriptedOpenAI
from test_stop_early import NO_SECTIONS, _grow_dataset

PROMPT = "summarization-catchup"
Edit = Callable[[Path, Callable[[Any], None]], None]

pytestmark = pytest.mark.usefixtures("mlflow_store")


def gate_promotion_on_counters(project_dir: Path, edit_yaml: Edit) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={PROMPT: ["counters"]}))


def test_a_run_that_stopped_early_is_no_evidence(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit, scripted_server: ScriptedOpenAI
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    _grow_dataset(project_dir)  # 60 items
    scripted_server.responder = lambda body: NO_SECTIONS
    assert scoregate("run", "counters", "--no-cache", "--no-mlflow", "--no-report").code == 0
    reference = runs.latest()
    scripted_server.responder = scripted_server.default_reply
    stopped = scoregate(
        "run", "counters", "--stop-early", "--against", reference, "--stop-batch", "5", "--no-cache", "--no-report"
    )
    assert stopped.code == 0, stopped.output
    assert runs.manifest()["status"] == "stopped_early"
    items_run = runs.summary()["stop_early"]["items_run"]
    assert runs.summary()["verdict"] == "pass"  # its gates passed on the items it ran

    shown = scoregate("promote", PROMPT, "--dry-run")

    assert shown.code == ExitCode.GATES_FAILED, shown.output
    assert f"the newest ({runs.latest()}) stopped early at {items_run} of 60 items: not the whole dataset" in (
        shown.output
    )
    assert "every gate passed" not in shown.output


def test_a_run_on_another_model_than_the_experiments_is_no_evidence(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"].update(canned=canned_model()))
    assert scoregate("run", "counters", "--model", "canned", "--no-report").code == 0
    canned_run = runs.latest()

    refused = scoregate("promote", PROMPT, "--dry-run")

    assert refused.code == ExitCode.GATES_FAILED, refused.output
    assert (
        f"the newest ({canned_run}) ran on model 'canned', not 'scripted', the model experiment counters runs on"
        in refused.output
    )
    assert scoregate("run", "counters", "--no-report").code == 0
    shown = scoregate("promote", PROMPT, "--dry-run")
    assert shown.code == 0, shown.output
    assert re.search(rf"counters: run {re.escape(runs.latest())}, model scripted\b", shown.output), shown.output
