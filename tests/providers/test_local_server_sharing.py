"""The embedded model server is one per port, and a port is shared by every project that uses it: a project can
have its own (`settings.local_port`), and a server another project started is named, with how busy it is, by
`model status`, `model serve` and at the start of a run that will queue on it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scoregate.providers import local_server
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def other_projects_server(
    scripted_server: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """What `model serve` run in another project leaves for the server on the scripted server's port: its pid
    file and owner record; the "server" process keeps one CPU busy (it is serving that project's run)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    other = tmp_path / "someone-elses-clone"
    other.mkdir()
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    state = local_server.state_dir(scripted_server.port)
    (state / "server.pid").write_text(str(busy.pid))
    (state / "owner.json").write_text(json.dumps({"project": str(other), "pid": busy.pid}))
    try:
        yield other, busy
    finally:
        os.kill(busy.pid, signal.SIGKILL)
        busy.wait()


def use_local_model_on(port: int) -> Callable[[Any], None]:
    def change(config: Any) -> None:
        config["settings"]["local_port"] = port
        config["models"]["local"] = {"provider": "local", "model": "smollm2-135m", "timeout_s": 10}
        config["experiments"]["counters"]["model"] = "local"

    return change


def test_a_project_port_in_scoregate_yaml_is_where_its_runs_and_model_commands_go(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))

    ran = scoregate("run", "counters", "--limit", "1", "--no-mlflow")
    status = scoregate("model", "status")

    assert ran.code == 0, ran.output
    assert runs.manifest()["receipts"]["model"]["endpoint"] == scripted_server.url
    assert len(scripted_server.task_requests()) == 1
    assert f"local model healthy at {scripted_server.url}" in status.output


def test_model_status_and_serve_name_the_project_that_started_the_server(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    other_projects_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    other, busy = other_projects_server
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))

    status = scoregate("model", "status")
    served = scoregate("model", "serve")

    for result in (status, served):
        assert result.code == 0, result.output
        assert f"(pid {busy.pid}" in result.output
        assert f"started by the project in {other}" in result.output
        assert "for a server of this project's own, set `settings.local_port` in scoregate.yaml" in result.output


def test_a_run_on_another_projects_busy_server_says_whose_it_is_and_how_busy(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    other_projects_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    other, busy = other_projects_server
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))

    result = scoregate("run", "counters", "--limit", "1", "--no-mlflow")

    assert result.code == 0, result.output
    assert (
        f"local model at {scripted_server.url}: the server the project in {other} started (pid {busy.pid}); it is using"
    ) in result.output
    assert "of a CPU now (serving requests; this run's requests wait behind them)" in result.output
    assert "set `settings.local_port` in scoregate.yaml (or SCOREGATE_LOCAL_PORT) to a free port" in result.output


def test_a_run_on_this_projects_own_server_says_nothing_about_sharing(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    other_projects_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    _, busy = other_projects_server
    owner = local_server.state_dir(scripted_server.port) / "owner.json"
    owner.write_text(json.dumps({"project": str(project_dir), "pid": busy.pid}))
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))

    result = scoregate("run", "counters", "--limit", "1", "--no-mlflow")

    assert result.code == 0, result.output
    assert "the server the project in" not in result.output
    assert "started by this project" in scoregate("model", "status").output


def test_a_run_refused_by_a_busy_shared_server_names_the_project_that_started_it(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    other_projects_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    other, _ = other_projects_server
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["local"].update(timeout_s=1))
    scripted_server.latency_s = 6.0  # it accepts the one-token check but answers nothing in time

    result = scoregate("run", "counters", "--limit", "1", "--no-mlflow")

    assert result.code == 1, result.output
    assert "the server is up but busy" in result.output
    assert f"It was started by the project in {other}: for a server of this project's own" in result.output
    assert runs.ids() == []


def test_make_experiment_says_the_server_is_shared_once(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Edit,
    other_projects_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    other, _ = other_projects_server
    edit_yaml(project_dir / "scoregate.yaml", use_local_model_on(scripted_server.port))
    recipe = _make_experiment_commands()
    serve = next(re.search(r"scoregate model serve([^;]*)", line) for line in recipe if " model serve" in line)
    assert serve is not None, recipe
    serve_args = serve.group(1).split()

    served = scoregate("model", "serve", *serve_args)
    ran = scoregate("run", "counters", "--limit", "1", "--no-mlflow")

    said = served.output + " " + ran.output
    assert served.code == 0 and ran.code == 0, said
    assert f"started by the project in {other}" in served.output  # whose server it is, in one line
    assert said.count("for a server of this project's own") == 1, said
    assert "it is using" in ran.output  # the run's notice, with how busy the server is now, is the one kept


def _make_experiment_commands() -> list[str]:
    """The commands `make experiment` runs once set up (the Makefile's recipe, as make prints it)."""
    from support.projects import REPO

    planned = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", "-o", "setup", "experiment", "BIN=.venv/bin"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
        env={k: v for k, v in os.environ.items() if k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}},
    ).stdout  # fmt: skip
    return planned.splitlines()
