"""The test's MLflow store as a user would read it: the runs of an experiment, each metric logged once."""

from __future__ import annotations

import os
from typing import Any

from mlflow.tracking import MlflowClient


def mlflow_client() -> MlflowClient:
    """A client of this test's MLflow store (`MLFLOW_TRACKING_URI`, set by the `mlflow_store` fixture)."""
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def mlflow_runs_of(experiment: str = "counters") -> list[Any]:
    """Every MLflow run (deleted ones excluded) of `<experiment> (scripted-project)`."""
    client = mlflow_client()
    found = client.get_experiment_by_name(f"{experiment} (scripted-project)")
    return [] if found is None else client.search_runs([found.experiment_id])


def assert_each_metric_once(run_id: str) -> None:
    """The MLflow run has metrics, and each one's history holds exactly one value."""
    client = mlflow_client()
    metrics = client.get_run(run_id).data.metrics
    assert metrics
    for key in metrics:
        assert len(client.get_metric_history(run_id, key)) == 1, key
