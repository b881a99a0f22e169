"""A run's start: the models are named before the items are read, their check runs beside the rest of the start,
and the run's entry point loads none of the execution machinery until the check is under way."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.catalog.models import ModelSpec
from scoregate.catalog.plan import models_used, plan_experiment
from scoregate.catalog.project import load_project
from scoregate.engine.preflight import BackgroundPreflight
from scoregate.errors import ProviderUnavailable, ValidationFailed
from scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def test_the_plan_names_the_models_before_it_reads_the_items(project_dir: Path) -> None:
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    dataset.write_text(dataset.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    named: list[tuple[list[str], str]] = []

    with pytest.raises(ValidationFailed) as failed:
        plan_experiment(load_project(project_dir), "smoke", on_models=lambda *named_now: named.append(named_now))

    assert named == [(["scripted"], "scripted")]  # the check could start while the items were read
    assert "smoke_v1.jsonl:7" in failed.value.render()


def test_no_model_is_named_when_the_experiment_does_not_resolve(project_dir: Path, edit_yaml: Edit) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["experiments"]["smoke"].update(model="nowhere"))
    named: list[Any] = []

    with pytest.raises(ValidationFailed, match="no model 'nowhere'"):
        plan_experiment(load_project(project_dir), "smoke", on_models=lambda *args: named.append(args))

    assert named == []


def test_the_models_used_are_the_task_model_then_each_judge_once(project_dir: Path, edit_yaml: Edit) -> None:
    def two_models(config: Any) -> None:
        config["models"]["judge"] = dict(config["models"]["scripted"], model="judge-1")

    edit_yaml(project_dir / "scoregate.yaml", two_models)
    project = load_project(project_dir)
    plan = plan_experiment(project, "smoke", judge_model="judge")

    assert models_used(project, plan.spec, plan.model_name, plan.judge_model_name) == ["scripted", "judge"]
    counters_only = plan_experiment(project, "counters", judge_model="judge")
    assert models_used(project, counters_only.spec, counters_only.model_name, "judge") == ["scripted"]


def test_the_background_check_hands_its_error_to_the_caller(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    models = {"down": ModelSpec(provider="openai", model="m", base_url=f"http://127.0.0.1:{closed_port}/v1")}

    check = BackgroundPreflight(models, ["down"], default_judge="down", project_root=tmp_path).start()

    with pytest.raises(ProviderUnavailable, match=f"model 'down': cannot reach http://127.0.0.1:{closed_port}/v1"):
        check.wait()


def test_the_background_check_sends_one_request_per_model(tmp_path: Path, scripted_server: ScriptedOpenAI) -> None:
    models = {"scripted": ModelSpec(provider="openai", model="scripted-1", base_url=scripted_server.url)}

    check = BackgroundPreflight(models, ["scripted", "scripted"], default_judge="scripted", project_root=tmp_path)
    check.start().wait()

    assert len(scripted_server.preflight_requests()) == 1
    assert scripted_server.chat_requests() == []


def test_the_run_entry_point_loads_no_execution_machinery() -> None:
    late = ["scoregate.run_execution", "rich.progress", "numpy", "scipy", "jsonschema", "mlflow", "langfuse", "openai"]
    code = (
        "import sys, scoregate.experiment; "
        f"print(' '.join(m for m in {late!r} if any(k == m or k.startswith(m + '.') for k in sys.modules)))"
    )

    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()

    assert loaded == []
