"""Shared fixtures: a scripted OpenAI-compatible server, a small project wired to it, and the CLI as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fake_langfuse import fake_langfuse_fixture  # noqa: F401
from scoregate.cli import main
from scripted_openai import ScriptedOpenAI, markdown_summary

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background by a non-interactive shell (`make test &`, nohup) inherits SIGINT ignored,
    # and every scoregate it starts would ignore Ctrl-C too: give them a terminal's default, as a user's run has.
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
SCOREGATE_BIN = Path(sys.executable).parent / "scoregate"
DATASET_IDS = ("smoke-001", "smoke-002", "smoke-003", "smoke-005", "smoke-006", "smoke-007")
"""The shipped smoke items the test project keeps: three catch-up, three how-to, all with `desired_style`."""

ALL_GATES = [
    "sections_present",
    "tldr_caps_met",
    "faithfulness",
    "hallucinations_per_summary",
    "conciseness",
    "quality_catchup",
    "quality_howto",
]


def copy_shipped(root: Path, files: dict[str, list[str]]) -> None:
    """Copy shipped project files into the test project at `root`: folder (prompts, evaluators...) → file names."""
    for folder, names in files.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(REPO / folder / name, root / folder / name)


def project_config(base_url: str, model: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the test project's scoregate.yaml: the shipped gates and evaluators on the `scripted` model (served at
    `base_url`, or the `model` entry given)."""
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    route = shipped["experiments"]["smoke"]["prompt"]
    judges = ["ev_actionability_v1", "ev_faithfulness_v1", "ev_conciseness_v1"]
    served = {"provider": "openai", "model": "scripted-1", "base_url": base_url, "max_retries": 2, "timeout_s": 3}
    return {
        "project": "scripted-project",
        "settings": {
            "model": "scripted",
            "judge_model": "scripted",
            "concurrency": 2,
            "min_coverage": 0.8,
            "bootstrap_resamples": 200,
        },
        "models": {"scripted": {**(model or served), "max_connections": 4}},
        "composites": shipped["composites"],
        "gates": shipped["gates"],
        "experiments": {
            "smoke": {
                "dataset": "smoke_v1",
                "prompt": route,
                "evaluators": ["counters_v1", *judges],
                "composites": ["WeightedQuality"],
                "gates": ALL_GATES,
            },
            "counters": {
                "dataset": "smoke_v1",
                "prompt": route,
                "evaluators": ["counters_v1"],
                "gates": ["sections_present", "tldr_caps_met"],
                "concurrency": 1,
            },
        },
    }


def write_yaml(path: Path, data: Any) -> None:
    """Write `data` as YAML."""
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture
def scripted_server() -> Iterator[ScriptedOpenAI]:
    """A running scripted OpenAI-compatible server on 127.0.0.1 (judges answer the highest score)."""
    server = ScriptedOpenAI()
    try:
        yield server
    finally:
        server.close()


def canned_model() -> dict[str, Any]:
    """The `scripted` model as `provider: scripted`: the scripted server's summaries and judge replies, no HTTP."""
    howto = markdown_summary({"messages": [{"content": "Step-by-step"}]})
    replies = [{"match": "Step-by-step", "reply": howto}]
    return {
        "provider": "scripted",
        "model": "scripted-1",
        "options": {"replies": replies, "default": markdown_summary({})},
    }


def new_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]) -> Path:
    """Write the small test project (shipped prompts and evaluators, 6 smoke items) with `config` as scoregate.yaml.

    The environment is isolated per test: MLflow goes to a fresh sqlite store, no API key, no debug switch,
    and a wide console so messages are not wrapped.
    """
    root = tmp_path / "project"
    shutil.copytree(REPO / "prompts", root / "prompts")
    shutil.copytree(REPO / "evaluators", root / "evaluators")
    (root / "datasets").mkdir()
    shutil.copy(REPO / "datasets" / "smoke_v1.yaml", root / "datasets" / "smoke_v1.yaml")
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if any(f'"id": "{item_id}"' in line for item_id in DATASET_IDS)]
    assert len(kept) == len(DATASET_IDS)
    (root / "datasets" / "smoke_v1.jsonl").write_text("".join(kept), encoding="utf-8")
    write_yaml(root / "scoregate.yaml", config)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow' / 'mlflow.db'}")
    (tmp_path / "mlflow").mkdir()
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SCOREGATE_DEBUG", "SCOREGATE_LOCAL_PORT",
                 "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return root


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


@dataclass(frozen=True)
class CliResult:
    """What a user sees from one `scoregate` command: exit code, stdout and stderr."""

    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        """stdout and stderr together, whitespace collapsed (so console wrapping never splits a phrase)."""
        return " ".join(f"{self.out}\n{self.err}".split())


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


class Runs:
    """The project's local run store as a test reads it: newest run, its results, summary and manifest."""

    def __init__(self, root: Path) -> None:
        self.root = root / "runs"

    def ids(self) -> list[str]:
        """Every stored run id, oldest first."""
        return sorted(p.name for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []

    def latest(self) -> str:
        """The newest run id (by its started_at)."""
        ids = self.ids()
        assert ids, "no run was stored"
        return max(ids, key=lambda run_id: self.manifest(run_id)["started_at"])

    def results(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The parsed lines of results.jsonl."""
        text = (self.root / (run_id or self.latest()) / "results.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    def summary(self, run_id: str | None = None) -> dict[str, Any]:
        """summary.json."""
        return dict(json.loads((self.root / (run_id or self.latest()) / "summary.json").read_text(encoding="utf-8")))

    def manifest(self, run_id: str | None = None) -> dict[str, Any]:
        """manifest.json."""
        path = self.root / (run_id or self.latest()) / "manifest.json"
        return dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture
def runs(project_dir: Path) -> Runs:
    """The test project's run store."""
    return Runs(project_dir)
