"""Shared fixtures: a scripted OpenAI-compatible server, a small project wired to it, and the CLI as a user runs it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.cli import main
from support.fake_langfuse import fake_langfuse_fixture  # noqa: F401
from support.projects import SCOREGATE_BIN, CliResult, Runs, canned_model, new_project, project_config, write_yaml
from support.scripted_openai import ScriptedOpenAI

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background by a non-interactive shell (`make test &`, nohup) inherits SIGINT ignored,
    # and every scoregate it starts would ignore Ctrl-C too: give them a terminal's default, as a user's run has.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def scripted_server() -> Iterator[ScriptedOpenAI]:
    """A running scripted OpenAI-compatible server on 127.0.0.1 (judges answer the highest score)."""
    server = ScriptedOpenAI()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def project_dir(tmp_path: Path, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project (shipped prompts and evaluators, 6 smoke items) whose model and judge is the scripted server."""
    return new_project(tmp_path, monkeypatch, project_config(scripted_server.url))


@pytest.fixture
def canned_project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The same project with its model as `provider: scripted` (`canned_model`): no server, no HTTP.

    A test file whose runs need only canned replies overrides `project_dir` with it.
    """
    return new_project(tmp_path, monkeypatch, project_config("", canned_model()))


@pytest.fixture(scope="session", autouse=True)
def private_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Keep the local model's per-port state (pid, log) out of the user's ~/.local/state for the whole session."""
    state = tmp_path_factory.mktemp("xdg-state")
    before = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)
    yield state
    if before is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = before


@pytest.fixture(scope="session")
def migrated_mlflow_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty MLflow sqlite store with its schema created, kept in pytest's cache per MLflow version.

    Creating the schema takes seconds (every migration runs); copying a created one takes milliseconds.
    """
    import mlflow
    from mlflow.tracking import MlflowClient

    cache = getattr(request.config, "cache", None)  # absent under `-p no:cacheprovider`
    folder = cache.mkdir("scoregate-mlflow") if cache is not None else tmp_path_factory.mktemp("mlflow-cache")
    cached = folder / f"empty-{mlflow.__version__}.db"
    if not cached.is_file():
        fresh = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
        MlflowClient(tracking_uri=f"sqlite:///{fresh}").search_experiments()
        assert not fresh.with_name(fresh.name + "-wal").exists()
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        shutil.copy(fresh, partial)
        os.replace(partial, cached)  # atomic, so a concurrent session never reads half a file
    return cached


@pytest.fixture
def mlflow_store(project_dir: Path, migrated_mlflow_db: Path) -> str:
    """This test's own MLflow tracking store (real sqlite, fresh); return its tracking URI."""
    uri = os.environ["MLFLOW_TRACKING_URI"]
    shutil.copy(migrated_mlflow_db, uri.removeprefix("sqlite:///"))
    return uri


@pytest.fixture
def edit_yaml() -> Callable[[Path, Callable[[Any], None]], None]:
    """Return edit(path, change): load a YAML file, let `change` mutate it in place, write it back."""

    def edit(path: Path, change: Callable[[Any], None]) -> None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(data)
        write_yaml(path, data)

    return edit


@pytest.fixture
def scoregate(
    project_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """Return cli(*args): run `scoregate ARGS -C project_dir` in-process through `scoregate.cli.main`.

    The exit code is the one `main` hands to `sys.exit`; any exception other than SystemExit escapes
    (a traceback the user would have seen) and fails the test.
    """

    def cli(*args: str, project: Path | None = project_dir) -> CliResult:
        capsys.readouterr()
        argv = ["scoregate", *args, *(["-C", str(project)] if project is not None else [])]
        monkeypatch.setattr(sys, "argv", argv)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err + captured.out
        return CliResult(code, captured.out, captured.err)

    return cli


@pytest.fixture
def start_scoregate(project_dir: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Return start(*args): launch the real `scoregate ARGS -C project_dir` executable (for signals and kill -9).

    Output goes to pipes; every process still running at the end of the test is killed.
    """
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [str(SCOREGATE_BIN), *args, "-C", str(project_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def runs(project_dir: Path) -> Runs:
    """The test project's run store."""
    return Runs(project_dir)
