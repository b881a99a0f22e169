"""A run's start: every file and item check, then the models' one-token check (so a rejected or refused run spends
no request), and the entry point loads no execution machinery early. A second resume of a run another process is
running is in tests/e2e/test_run_start_processes.py."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.catalog.models import ModelSpec
from scoregate.catalog.plan import models_used, plan_experiment
from scoregate.engine.preflight import BackgroundPreflight
from scoregate.errors import ProviderUnavailable
from scoregate.store.run_store import RunStore
from scoregate.tracks.project import load_project
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]


def test_no_model_request_is_sent_before_every_item_is_checked(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    first = dataset.read_text(encoding="utf-8").splitlines()[0]
    item = json.loads(first)
    lines = [json.dumps(dict(item, id=f"item-{n:05d}")) for n in range(20_000)]  # a scan long enough to race
    dataset.write_text("\n".join([*lines, "{not json"]) + "\n", encoding="utf-8")

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code == 1, result.output
    assert f"{dataset}:20001: not valid JSON" in result.output
    time.sleep(0.5)  # a check started in the background would have arrived by now
    assert scripted_server.requests == []  # not even the one-token check: a rejected run spends nothing
    assert runs.ids() == []


def test_the_models_used_are_the_task_model_then_each_judge_once(project_dir: Path, edit_yaml: Edit) -> None:
    def two_models(config: Any) -> None:
        config["models"]["judge"] = dict(config["models"]["scripted"], model="judge-1")

    edit_yaml(project_dir / "scoregate.yaml", two_models)
    project = load_project(project_dir)
    plan = plan_experiment(project, "smoke", judge_model="judge")

    assert models_used(plan) == ["scripted", "judge"]
    counters_only = plan_experiment(project, "counters", judge_model="judge")
    assert models_used(counters_only) == ["scripted"]


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
    late = [
        "scoregate.app.run.run_execution",
        "rich.progress",
        "numpy",
        "scipy",
        "jsonschema",
        "mlflow",
        "langfuse",
        "openai",
    ]
    code = (
        "import sys, scoregate.app.run.experiment; "
        f"print(' '.join(m for m in {late!r} if any(k == m or k.startswith(m + '.') for k in sys.modules)))"
    )

    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()

    assert loaded == []


HEAVY_BEFORE_ITEMS = ("mlflow", "pandas", "scipy", "numpy", "langfuse", "openai")
TRACK_SUMMARIES = ("scoregate.tracks.extraction.run_summary", "scoregate.tracks.tags.run_summary")
NOT_BEFORE_THE_CHECK = (
    "httpx",  # Langfuse's transport (the models' is httpx2): not loaded to learn that Langfuse is off
    "rich",  # the terminal output starts once the check is out
    "rapidfuzz",  # a counter's similarity: loaded at its first score
    "scoregate.app.run.run_execution",
    "scoregate.engine.progress",
    "scoregate.analysis.summary",
    "scoregate.report",
    "scoregate.sinks",
)
RUN_WATCHING_REQUESTS = """
import importlib.metadata, json, os, sys, threading
from pathlib import Path
watched, port, seen, at_check, versions_read = {HEAVY!r}, int(sys.argv[2]), [], [], []
metadata_version = importlib.metadata.version

def version(name):  # the versions scoregate looks up (a scan of site-packages each, ~5 ms); the HTTP client's own
    if name not in ("httpx2", "httpcore2"):  # read theirs as they load, for the check itself
        versions_read.append(name)
    return metadata_version(name)

importlib.metadata.version = version
early = {EARLY!r}

def loaded(names):
    return sorted(m for m in names if any(k == m or k.startswith(m + ".") for k in list(sys.modules)))

def at_request(event, args):
    if event == "socket.connect" and len(seen) < 2 and isinstance(args[1], tuple) and args[1][1:2] == (port,):
        seen.append(loaded(watched))

start = threading.Thread.start

def starting(thread):  # what the main thread has loaded when the models' check goes out
    if thread.name == "scoregate-preflight":
        at_check.append(loaded(early + watched) + [f"version of {{name}}" for name in versions_read])
    start(thread)

threading.Thread.start = starting
sys.addaudithook(at_request)
for key in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
    os.environ.pop(key, None)
from scoregate.app import RunOptions, run_experiment
off = RunOptions.Mirrors(off=frozenset({{"mlflow"}}))
run_experiment(Path(sys.argv[1]), "counters", RunOptions(mirrors=off, use_cache=False))
print(json.dumps({{"at_check": at_check, "at_requests": seen, "at_exit": loaded(watched)}}))
"""


def test_a_run_loads_no_heavy_library_before_its_first_requests(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    code = RUN_WATCHING_REQUESTS.format(HEAVY=HEAVY_BEFORE_ITEMS + TRACK_SUMMARIES, EARLY=NOT_BEFORE_THE_CHECK)

    done = subprocess.run(
        [sys.executable, "-c", code, str(project_dir), str(scripted_server.port)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    # the models' check goes out before the run's output, scoring and end load, and before any package's version
    # is looked up (Langfuse's SDK version, for its mirror: not with Langfuse off)
    assert said["at_check"] == [[]]
    assert said["at_requests"] == [[], []]  # at the models' one-token check, and at the first item's request
    assert "numpy" in said["at_exit"]  # loaded for the summary, after the items
    # no MLflow, no pandas; neither track's summary (jsonschema, for extraction) in a run without their evaluators
    assert [m for m in said["at_exit"] if m != "numpy"] == []


def test_a_run_with_langfuse_off_loads_no_langfuse_mirror_machinery() -> None:
    late = ["scoregate.integrations.langfuse.mirror_state", "scoregate.integrations.langfuse.delivery"]
    late += ["numpy", "httpx"]
    code = (
        "import os, sys, pathlib\n"
        "for key in ('LANGFUSE_PUBLIC_KEY', 'LANGFUSE_SECRET_KEY', 'LANGFUSE_HOST'): os.environ.pop(key, None)\n"
        "from scoregate.sinks.contract import SinkContext\n"
        "from scoregate.sinks.registry import build_sink\n"
        "assert build_sink('langfuse', SinkContext(pathlib.Path('.'))).configured() is not None\n"
        f"print(' '.join(m for m in {late!r} if any(k == m or k.startswith(m + '.') for k in sys.modules)))"
    )

    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()

    assert loaded == []


def test_an_ordinary_run_reads_its_results_no_extra_time_to_say_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scoregate.app.run.stop_early import stopped_status

    store = RunStore.create(tmp_path, "r1", {"run_id": "r1", "receipts": {}})

    def no_extra_pass(self: RunStore, **_: Any) -> set[str]:
        raise AssertionError("the results were read again to decide `finished`")

    monkeypatch.setattr(RunStore, "done_ids", no_extra_pass)

    assert stopped_status(store) == "finished"


CLI_RUN_WATCHING_THE_COLLECTOR = """
import gc, json, os, sys, threading
passes, at_check, at_item = [], [], []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "start" else None)
start = threading.Thread.start

def starting(thread):  # the collector's passes so far, and whether it is on, when the models' check goes out
    if thread.name == "scoregate-preflight":
        at_check.append([len(passes), gc.isenabled()])
    start(thread)

def at_request(event, args):  # whether the collector is on at the first item's request
    if event != "socket.connect" or not isinstance(args[1], tuple) or args[1][1:2] != ({port},):
        return
    if at_check and not at_item and threading.current_thread().name != "scoregate-preflight":
        at_item.append(gc.isenabled())

threading.Thread.start = starting
sys.addaudithook(at_request)
for key in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "LANGFUSE_BASE_URL"):
    os.environ.pop(key, None)
sys.argv = ["scoregate", *sys.argv[1:]]
import scoregate.cli
passes.clear()  # from here on: the command's own start (the interpreter's and the CLI module's imports are before)
try:
    scoregate.cli.main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(json.dumps({{"at_check": at_check, "at_item": at_item, "at_exit": gc.isenabled()}}))
"""


def test_the_collector_makes_no_pass_while_a_run_starts_and_is_back_on_for_its_items(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    """`scoregate run` allocates ~100,000 objects that all live on before its first request (imports, the project,
    the HTTP client); the collector's passes over them (~20 ms) find nothing, so it is off until the models' check
    is out, then back on (what the start built is frozen: later passes skip it)."""
    code = CLI_RUN_WATCHING_THE_COLLECTOR.format(port=scripted_server.port)
    args = ["run", "counters", "--no-mlflow", "--no-cache", "--no-report", "-C", str(project_dir)]

    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["at_check"] == [[0, False]]  # no pass since the command started, and none can start
    assert said["at_item"] == [True] and said["at_exit"] is True


@pytest.mark.parametrize("args", [["validate"], ["run"], ["run", "counters", "--dry-run"]])
def test_commands_other_than_a_run_keep_the_collector_on(args: list[str], project_dir: Path) -> None:
    code = "\n".join(
        [
            "import gc, sys",
            f"sys.argv = ['scoregate', *{args!r}, '-C', {str(project_dir)!r}]",
            "import scoregate.cli",
            "try:",
            "    scoregate.cli.main()",
            "except SystemExit as exc:",
            "    assert exc.code in (0, None), exc.code",
            "print('collector on:', gc.isenabled())",
        ]
    )

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "collector on: True"


def test_a_run_refused_before_its_check_leaves_the_collector_as_the_caller_had_it(
    scoregate: Callable[..., CliResult], project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    """In one process (a test, a Python caller of `scoregate.cli.main`), a run that stops before its first request
    leaves the collector on, with nothing frozen."""
    import gc

    with (project_dir / "datasets" / "smoke_v1.jsonl").open("a", encoding="utf-8") as dataset:
        dataset.write("{not json\n")

    result = scoregate("run", "smoke", "--no-mlflow")

    assert result.code == 1 and scripted_server.requests == []
    assert gc.isenabled() and gc.get_freeze_count() == 0
