"""Resume checks what the run uses, part by part: unrelated edits to scoregate.yaml never block it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

EditYaml = Callable[[Path, Callable[[Any], None]], None]


def _started(scoregate: Callable[..., CliResult], runs: Runs) -> str:
    """A stored run marked as interrupted (a finished run has nothing to resume)."""
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow", "--no-langfuse").code == 0
    run_id = runs.latest()
    manifest_path = runs.root / run_id / "manifest.json"
    manifest_path.write_text(json.dumps({**runs.manifest(run_id), "status": "interrupted"}), encoding="utf-8")
    return run_id


def test_adding_a_model_and_an_experiment_does_not_block_resume(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: EditYaml, runs: Runs
) -> None:
    run_id = _started(scoregate, runs)

    def add(config: Any) -> None:
        config["models"]["new-model"] = {"provider": "openai", "model": "other", "base_url": "http://127.0.0.1:9/v1"}
        config["experiments"]["new-experiment"] = {**config["experiments"]["counters"], "model": "new-model"}
        config["models"]["scripted"]["max_connections"] = 8  # how the run goes, not what it measures
        config["settings"]["concurrency"] = 3

    edit_yaml(project_dir / "scoregate.yaml", add)

    result = scoregate("run", "--resume", run_id, "--no-mlflow", "--no-langfuse")

    assert result.code == 0, result.output
    assert runs.manifest(run_id)["status"] == "finished"


def test_a_refused_resume_names_the_part_of_scoregate_yaml_that_changed(
    scoregate: Callable[..., CliResult], scripted_server: ScriptedOpenAI, project_dir: Path, edit_yaml: EditYaml,
    runs: Runs,
) -> None:  # fmt: skip
    run_id = _started(scoregate, runs)

    def change(config: Any) -> None:
        config["models"]["scripted"]["max_tokens"] = 77
        next(g for g in config["gates"] if g["name"] == "sections_present")["threshold"] = 0.5

    edit_yaml(project_dir / "scoregate.yaml", change)
    scripted_server.clear_requests()

    result = scoregate("run", "--resume", run_id, "--no-mlflow", "--no-langfuse")

    assert result.code == 1
    assert (
        f"cannot resume {run_id}: scoregate.yaml changed where this run reads it "
        "(gates.sections_present, models.scripted) since the run started"
    ) in result.output
    assert scripted_server.chat_requests() == []


def test_a_refused_resume_names_the_prompt_that_changed(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs
) -> None:
    run_id = _started(scoregate, runs)
    manifest = runs.manifest(run_id)
    prompt = sorted(manifest["receipts"]["prompts"])[0]
    path = project_dir / "prompts" / f"{prompt}.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("summary", "summary (edited)", 1), encoding="utf-8")

    result = scoregate("run", "--resume", run_id, "--no-mlflow", "--no-langfuse")

    assert result.code == 1
    assert f"the prompts changed ({prompt})" in result.output
