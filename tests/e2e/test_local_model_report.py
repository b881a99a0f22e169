"""`make experiment`'s path through the real embedded local model: the run writes its HTML report, and its
MLflow run (a real sqlite store) has a description, the dataset as a dataset input and rounded metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from support.digits import significant_digits
from support.local_model import MISSING, free_port, scoregate, stop_server, write_project

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(bool(MISSING), reason=f"the local model needs {' and '.join(MISSING)} (`make setup`)"),
]


def test_a_local_model_run_has_a_report_and_a_readable_mlflow_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    root = tmp_path / "project"
    write_project(root)
    port = free_port()
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("COLUMNS", "250")
    served = scoregate(root, "model", "serve", timeout=150)
    try:
        assert served.returncode == 0, served.stderr
        ran = scoregate(root, "run", "smoke", "--limit", "1", timeout=540)  # calls of at most 240 s: a hang guard
    finally:
        stop_server(root)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    report = run_dir / "report.html"
    assert f"report: {report}" in " ".join(ran.stdout.split()) and "smollm2-135m" in report.read_text()

    client = MlflowClient(tracking_uri=uri)
    (experiment,) = [e for e in client.search_experiments() if e.name == "smoke (local-model-test)"]
    (run,) = client.search_runs([experiment.experiment_id])
    assert "### smoke · local (`smollm2-135m`)" in run.data.tags["mlflow.note.content"]
    (dataset,) = run.inputs.dataset_inputs
    receipts = json.loads((run_dir / "manifest.json").read_text())["receipts"]["dataset"]
    assert (dataset.dataset.name, dataset.dataset.digest) == ("smoke_v1", receipts["content_hash"][:12])
    for key, value in run.data.metrics.items():
        assert math.isnan(value) or value.is_integer() or significant_digits(value) <= 4, (key, value)
    assert "report.html" in {a.path for a in client.list_artifacts(run.info.run_id)}
