"""Scripting basics: --version, completion, --json with human text on stderr, -C anywhere, --judge-model, help."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from scoregate import __version__
from scoregate.cli import app
from support.projects import SCOREGATE_BIN, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def _leaf_commands() -> Iterator[tuple[list[str], Any]]:
    """Yield (path, click command) of every command the CLI has, groups walked (their commands load lazily)."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        if isinstance(command, TyperGroup):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), [*path, name])
        else:
            yield path, command

    yield from walk(typer.main.get_command(app), [])


def test_version_prints_the_version(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("--version", project=None)

    assert result.code == 0 and result.out.strip() == f"scoregate {__version__}"


def test_show_completion_prints_a_shell_script() -> None:
    # the executable, not `main()` in the test process: the script names the program it was started as
    result = subprocess.run([str(SCOREGATE_BIN), "--show-completion", "bash"], capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    assert (
        "_SCOREGATE_COMPLETE" in result.stdout
        and "complete -o default -F _scoregate_completion scoregate" in result.stdout
    )


def test_every_command_accepts_dash_c() -> None:
    missing = [" ".join(path) for path, command in _leaf_commands()
               if not any("-C" in p.opts and "--project" in p.opts for p in command.params)]  # fmt: skip
    assert missing == []


def test_no_help_shows_a_bool_metavar() -> None:
    runner = CliRunner()
    for path, _command in [([], None), *_leaf_commands()]:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, path
        assert max(len(line) for line in result.output.splitlines()) <= 80, path


def test_dash_c_before_the_subcommand(
    scoregate: Callable[..., CliResult], project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no scoregate.yaml here or above

    assert scoregate("runs", "list", project=None).code != 0
    result = scoregate("-C", str(project_dir), "runs", "list", project=None)

    assert result.code == 0 and "no runs yet" in result.output


def test_empty_runs_list_says_how_to_make_the_first_run(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("runs", "list")

    assert result.code == 0
    assert "no runs yet" in result.output and "scoregate run EXPERIMENT" in result.output
    assert json.loads(scoregate("runs", "list", "--json").out) == []


def test_run_json_puts_the_summary_on_stdout_and_the_rest_on_stderr(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    result = scoregate("run", "counters", "--no-mlflow", "--no-langfuse", "--json")

    assert result.code == 0
    data = json.loads(result.out)  # stdout is exactly one JSON document
    assert data["run_id"] == runs.latest() and data["verdict"] == "pass"
    assert data["summary"]["scores"]["word_count"]["n_measured"] == 6
    assert "verdict: PASS" in result.err and f"run {data['run_id']} (" in result.err and "stored in" in result.err

    listed = json.loads(scoregate("runs", "list", "--json").out)
    assert [r["run_id"] for r in listed] == [data["run_id"]]
    assert listed[0]["experiment"] == "counters" and listed[0]["verdict"] == "pass" and listed[0]["items"] == 6


def test_run_without_a_name_lists_the_experiments(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("run")

    assert result.code == 0
    assert "smoke: dataset smoke_v1" in result.output and "counters: dataset smoke_v1" in result.output
    names = [e["name"] for e in json.loads(scoregate("run", "--json").out)]
    assert names == ["smoke", "counters"]


def test_the_experiment_list_counts_only_the_gates_that_judge_its_dataset(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Callable[..., None]
) -> None:
    def limit_a_gate(config: dict[str, Any]) -> None:
        gate = next(g for g in config["gates"] if g["name"] == "sections_present")
        gate["datasets"] = ["howto_v1"]  # not smoke_v1: this gate never judges a smoke run

    listed = {e["name"]: e for e in json.loads(scoregate("run", "--json").out)}
    edit_yaml(project_dir / "scoregate.yaml", limit_a_gate)
    limited = {e["name"]: e for e in json.loads(scoregate("run", "--json").out)}

    assert len(limited["smoke"]["gates"]) == len(listed["smoke"]["gates"]) - 1
    assert f"{len(limited['smoke']['gates'])} gates" in scoregate("run").output


def test_run_judge_model_sends_the_judges_to_that_model(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
    runs: Runs,
) -> None:
    def add_judge(config: Any) -> None:
        config["models"]["other-judge"] = {**config["models"]["scripted"], "model": "judge-2"}

    edit_yaml(project_dir / "scoregate.yaml", add_judge)

    result = scoregate("run", "smoke", "--limit", "1", "--no-mlflow", "--no-langfuse", "--judge-model", "other-judge")

    assert result.code == 0
    assert {r.body["model"] for r in scripted_server.judge_requests()} == {"judge-2"}
    assert {r.body["model"] for r in scripted_server.task_requests()} == {"scripted-1"}
    assert runs.manifest()["receipts"]["judge_model"]["name"] == "other-judge"

    unknown = scoregate("run", "smoke", "--judge-model", "nope", "--no-mlflow")
    assert unknown.code != 0 and "--judge-model nope: no such model under `models:`" in unknown.output


def test_local_model_status_and_stop_agree_between_projects(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One port, one server: its pid file is not per project, so any project sees (and can stop) it."""
    from scoregate.providers import local_server

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(scripted_server.port))  # the scripted server answers /v1/models
    other = tmp_path / "other-project"
    other.mkdir()
    (other / "scoregate.yaml").write_text((project_dir / "scoregate.yaml").read_text())
    # What `model serve` leaves behind when it starts the server from `project_dir`: its pid file.
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    # The real server's parent has exited, so it is reaped the moment it ends; this one's parent is the test, and
    # unreaped it would stay a zombie that `model stop` waits 15 s on as if it were still alive.
    threading.Thread(target=holder.wait, daemon=True).start()
    try:
        (local_server.state_dir() / "server.pid").write_text(str(holder.pid))

        here = scoregate("model", "status")
        there = scoregate("model", "status", project=other)

        assert here.code == there.code == 0
        assert here.out == there.out and f"(pid {holder.pid})" in here.out
        assert "local model stopped" in scoregate("model", "stop", project=other).out
        assert holder.wait(timeout=10) == -signal.SIGTERM
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()


def test_a_limited_run_is_listed_as_part_of_its_dataset_and_named_apart(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    from scoregate.store.identity import mirror_run_name
    from scoregate.store.record import Manifest

    for _ in range(2):
        assert scoregate("run", "counters", "--limit", "2", "--no-mlflow", "--no-langfuse").code == 0
    assert scoregate("run", "counters", "--no-mlflow", "--no-langfuse").code == 0
    full, *limited = sorted(runs.ids(), key=lambda r: runs.manifest(r)["started_at"], reverse=True)

    listed = scoregate("runs", "list")
    assert listed.output.count("counters on smoke_v1 2 of 6 items (--limit 2) primary") == 2
    assert "counters on smoke_v1 6/6 items primary" in listed.output  # a full run reads as before
    rows = {r["run_id"]: r for r in json.loads(scoregate("runs", "list", "--json").out)}
    assert (rows[limited[0]]["limit"], rows[limited[0]]["dataset_items"], rows[limited[0]]["items_total"]) == (2, 6, 2)
    assert rows[full]["limit"] is None and rows[full]["items_total"] == 6
    assert "first 2 of 6 items (--limit 2)" in scoregate("runs", "show", limited[0]).output

    names = [mirror_run_name(Manifest.model_validate(runs.manifest(r))) for r in (full, *limited)]
    assert len(set(names)) == 3  # same experiment, model and prompts: still three names in MLflow
    prompts = runs.manifest(full)["receipts"]["prompts"]
    versions, prompt_names = ", ".join(f"@{p['version']}" for p in prompts.values()), ", ".join(prompts)
    assert names[0] == f"scripted · {versions} · {prompt_names} · {full}"  # <model> · @<version> · <prompt> · <id>
    for name, run in zip(names[1:], limited, strict=True):
        assert name == f"scripted · {versions} · limit 2 · {prompt_names} · {run}"


def test_run_without_a_name_counts_in_the_right_number(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("run")

    assert "model scripted, 4 evaluators, 6 gates" in result.output  # of its 7, quality_howto judges howto_v1 only
    assert "model scripted, 1 evaluator, 2 gates" in result.output


SLOW_MODELS = """
import http.server, sys, time
delay, spin = float(sys.argv[1]), sys.argv[2] == "spin"
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        until = time.monotonic() + delay
        while spin and time.monotonic() < until:
            sum(range(1000))
        time.sleep(max(0.0, until - time.monotonic()))
        self.send_response(200)
        self.send_header("Content-Length", "12")
        self.end_headers()
        self.wfile.write(b'{"data": []}')
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class SlowModels:
    """A model server in its own process whose model list answers after `delay_s`: spinning the CPU or idle."""

    def __init__(self, delay_s: float, *, spin: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SLOW_MODELS, str(delay_s), "spin" if spin else "sleep"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,  # a client that gave up breaks its pipe
        )  # fmt: skip
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.pid = self.process.pid

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_local_model_status_tells_busy_from_stuck_starting_and_stopped(
    scoregate: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live server that answers late is busy while it works (a run), stuck when it does nothing."""
    from scoregate.providers.local_server import probe_server

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    from scoregate.providers import local_server

    busy = SlowModels(1.0, spin=True)
    stuck = SlowModels(1.0, spin=False)
    try:
        state, detail = probe_server(stuck.url, stuck.pid, timeout_s=0.3)
        assert state == "stuck" and "did not list its models within 0.3 s and used no CPU" in detail
        assert probe_server(stuck.url, None, timeout_s=0.3)[0] == "no answer"  # no pid: nothing tells which
        assert probe_server(busy.url, busy.pid, timeout_s=0.3)[0] == "busy"
        assert probe_server(busy.url, busy.pid, timeout_s=5.0) == ("healthy", "")  # a long enough wait sees it answer
        assert probe_server(closed_port_url(), busy.pid)[0] == "starting"  # alive, its port not open yet: loading
        assert probe_server(closed_port_url(), None)[0] == "not running"

        for server in (busy, stuck):  # what `model serve` leaves: the pid file; the port is the server's
            monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(server.port))
            (local_server.state_dir() / "server.pid").write_text(str(server.pid))
            result = scoregate("model", "status", "--timeout", "0.3")
            if server is busy:  # busy serving a run is not a failure
                assert result.code == 0 and f"local model busy at {busy.url} (pid {busy.pid})" in result.output
                assert "starting or stuck" not in result.output
            else:
                assert result.code == 1 and "local model stuck" in result.output
                assert "scoregate model stop" in result.output
    finally:
        busy.close()
        stuck.close()


def test_runs_show_outside_git_says_commit_dash_not_none(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--no-langfuse", "--no-report").code == 0
    assert runs.manifest()["receipts"]["git"]["commit"] is None  # the test project is not in a git repository

    shown = scoregate("runs", "show", runs.latest()).output

    assert "commit —" in shown and "None" not in shown, shown
