"""Runs started at once in a project whose MLflow store does not exist yet: the store is created once (a file
lock around its creation and migration), and every run's mirror lands, or the run says it did not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mlflow.tracking import MlflowClient

from support.projects import SCOREGATE_BIN

RUNS_AT_ONCE = 3


def test_runs_started_at_once_on_a_new_mlflow_store_all_mirror(project_dir: Path) -> None:
    database = Path(os.environ["MLFLOW_TRACKING_URI"].removeprefix("sqlite:///"))
    assert not database.exists()
    command = [str(SCOREGATE_BIN), "run", "counters", "--limit", "2", "--no-report", "-C", str(project_dir)]

    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)]
    processes += [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(RUNS_AT_ONCE - 1)
    ]
    outputs = [p.communicate(timeout=300)[0] for p in processes]

    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output
        assert "Traceback" not in output
        assert "mlflow mirror failed" not in output, output
        assert "mlflow: run " in output, output
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name("counters (scripted-project)")
    assert experiment is not None
    mirrored = client.search_runs([experiment.experiment_id])
    stored = sorted(p.name for p in (project_dir / "runs").iterdir() if p.is_dir())
    assert sorted(r.data.tags["scoregate.run_id"] for r in mirrored) == stored
    assert len(stored) == RUNS_AT_ONCE
    assert all(r.data.metrics["items"] == 2 for r in mirrored)
