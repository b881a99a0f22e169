"""The MLflow mirror works in its own process: the command that ran the items never imports MLflow (~200 MB),
the worker's errors come back as the command's own, and a kill -9 of either process followed by a re-sync leaves one
MLflow run (the worker never outlives its parent)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from scoregate.app import RunOptions, run_experiment
from scoregate.errors import ScoregateError
from scoregate.sinks.contract import SinkContext
from scoregate.sinks.mirror_all import Mirror, mirror_all
from scoregate.sinks.mlflow import process
from scoregate.sinks.mlflow.run_mirror import RUN_ID_TAG
from scoregate.store.run_store import RunStore

pytestmark = pytest.mark.usefixtures("mlflow_store")

TESTS = Path(__file__).resolve().parents[1]
RUN_WITH_MLFLOW = """
import json, sys
from pathlib import Path
from scoregate.app import RunOptions, run_experiment
off = RunOptions.Mirrors(off=frozenset({"langfuse"}))
outcome = run_experiment(Path(sys.argv[1]), "counters", RunOptions(mirrors=off))
print(json.dumps({"mlflow_loaded": "mlflow" in sys.modules, "mirrors": outcome.mirrors,
                  "errors": outcome.mirror_errors}))
"""


def mirrored_runs(run_id: str) -> list[str]:
    """The statuses of the MLflow runs tagged with scoregate run `run_id`, in this test's store."""
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    experiments = [e.experiment_id for e in client.search_experiments()]
    found = client.search_runs(experiments, filter_string=f"tags.`{RUN_ID_TAG}` = '{run_id}'") if experiments else []
    return [run.info.status for run in found]


@pytest.fixture
def in_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow work goes to the worker process even though this test process has MLflow loaded."""
    monkeypatch.setattr(process, "in_child", lambda: True)


@pytest.fixture
def stored_run(project_dir: Path) -> RunStore:
    """A finished run of `counters`, not mirrored."""
    return run_experiment(
        project_dir, "counters", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    ).store


def test_a_run_mirrored_to_mlflow_never_imports_mlflow_in_its_own_process(project_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITH_MLFLOW, str(project_dir)], capture_output=True, text=True, timeout=600
    )

    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["errors"] == {} and said["mirrors"]["mlflow"]
    assert said["mlflow_loaded"] is False
    (run_dir,) = [d for d in (project_dir / "runs").iterdir() if d.is_dir()]
    assert mirrored_runs(run_dir.name) == ["FINISHED"]
    assert json.loads((run_dir / "links.json").read_text())["mlflow_run_id"] == said["mirrors"]["mlflow"]


@pytest.mark.usefixtures("in_child")
def test_the_worker_mirrors_a_run_and_tags_it_as_mlflow_in_this_process_would(
    stored_run: RunStore, project_dir: Path
) -> None:
    outcome = mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")
    run_id = outcome.links()["mlflow"]
    mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")  # again: an update, not a second run

    assert outcome.troubles() == {} and mirrored_runs(stored_run.run_id) == ["FINISHED"]
    assert stored_run.links["mlflow_run_id"] == run_id
    from scoregate.sinks.mlflow.sink import MlflowSink

    MlflowSink(SinkContext(project_dir)).link(stored_run, {"langfuse.experiment_url": "http://lf/x"})
    tags = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"]).get_run(run_id).data.tags
    assert tags["langfuse.experiment_url"] == "http://lf/x"


@pytest.mark.usefixtures("in_child")
def test_the_workers_errors_are_raised_here_as_the_user_would_read_them(
    stored_run: RunStore, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = project_dir / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    with monkeypatch.context() as patched:
        patched.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{blocked / 'mlflow.db'}")
        broken = mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")
    trouble = broken.troubles()["mlflow"]
    assert trouble.startswith(("FileExistsError: ", "NotADirectoryError: ")), trouble  # an OSError, as in one process
    assert str(blocked) in trouble
    assert "Traceback" not in trouble

    (stored_run.directory / "summary.json").unlink()
    unfinished = mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")
    with pytest.raises(ScoregateError) as raised:
        unfinished.raise_for("mlflow")
    assert raised.value.message == f"run {stored_run.run_id} has no summary: it did not finish"
    assert raised.value.hint == f"resume it: `scoregate run --resume {stored_run.run_id}`"


@pytest.mark.usefixtures("in_child")
def test_a_worker_killed_mid_mirror_is_said_and_the_next_sync_finishes_the_same_mlflow_run(
    stored_run: RunStore, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    monkeypatch.setenv("WORKER_DIES", "kill")
    monkeypatch.setattr(process, "WORKER", "support.mlflow_worker_dies")

    killed = mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")

    assert killed.troubles()["mlflow"].startswith(
        "MlflowMirrorError: the MLflow mirror's process ended killed by SIGKILL"
    )
    assert mirrored_runs(stored_run.run_id) == ["RUNNING"]  # made, not finished
    monkeypatch.setattr(process, "WORKER", "scoregate.sinks.mlflow.worker")
    again = mirror_all(Mirror(stored_run), SinkContext(project_dir), only="mlflow")
    assert again.troubles() == {} and mirrored_runs(stored_run.run_id) == ["FINISHED"]


SYNC_WITH_HANGING_WORKER = """
import sys
from scoregate.sinks.mlflow import process
process.WORKER = "support.mlflow_worker_dies"
sys.argv = ["scoregate", "mlflow-sync", sys.argv[1], "-C", sys.argv[2]]
from scoregate.cli import main
main()
"""


def _gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie no one reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_a_killed_command_takes_its_mlflow_worker_with_it_and_a_re_sync_leaves_one_run(
    stored_run: RunStore, project_dir: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "worker.pid"
    env = {**os.environ, "PYTHONPATH": str(TESTS), "WORKER_DIES": "hang", "WORKER_PID_FILE": str(pid_file)}
    command = subprocess.Popen(
        [sys.executable, "-c", SYNC_WITH_HANGING_WORKER, stored_run.run_id, str(project_dir)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not pid_file.exists():
            assert command.poll() is None, command.communicate()
            assert time.monotonic() < deadline, "the worker never reached set_terminated"
            time.sleep(0.1)
        worker = int(pid_file.read_text())
        command.send_signal(signal.SIGKILL)
        command.wait()
        deadline = time.monotonic() + 30
        while not _gone(worker):
            assert time.monotonic() < deadline, f"the worker {worker} outlived its killed parent"
            time.sleep(0.1)
    finally:
        command.kill()
        command.wait()
    assert mirrored_runs(stored_run.run_id) == ["RUNNING"]

    resynced = subprocess.run(
        [sys.executable, "-c", SYNC_WITH_HANGING_WORKER.replace("support.mlflow_worker_dies", process.WORKER),
         stored_run.run_id, str(project_dir)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert resynced.returncode == 0, resynced.stderr[-3000:]
    assert mirrored_runs(stored_run.run_id) == ["FINISHED"]
