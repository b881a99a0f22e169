"""A cascade judge's figures reach a real MLflow store: `cascade.<evaluator>.*` metrics, NaN with the reason in the
tag `cascade.<evaluator>` when no threshold holds."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from support.cascade_project import JUDGE, SURE, UNSURE, make_cascade_project
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

pytestmark = pytest.mark.usefixtures("mlflow_store")
Edit = Callable[[Path, Callable[[Any], None]], None]


def _mirrored(runs: Runs) -> tuple[dict[str, float], dict[str, str]]:
    client = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])
    found = client.search_runs(
        [e.experiment_id for e in client.search_experiments()], f"tags.`scoregate.run_id` = '{runs.latest()}'"
    )
    (run,) = found
    return run.data.metrics, run.data.tags


def test_the_cascade_figures_are_mlflow_metrics_and_a_tag(
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    scoregate: Callable[..., CliResult],
    runs: Runs,
) -> None:
    make_cascade_project(project_dir, edit_yaml, scripted_server, monkeypatch)
    first = scoregate("run", "labelled", "--no-cache", "--no-langfuse")
    assert first.code == 0, first.output
    metrics, tags = _mirrored(runs)
    assert math.isnan(metrics[f"cascade.{JUDGE}.share_kept"])
    assert math.isnan(metrics[f"cascade.{JUDGE}.guaranteed_level"])
    assert tags[f"cascade.{JUDGE}"].startswith("null: no cascade calibration (")

    assert scoregate("cascade", JUDGE, "--run", runs.latest(), "--save").code == 0
    assert scoregate("run", "labelled", "--no-cache", "--no-langfuse").code == 0
    metrics, tags = _mirrored(runs)
    assert metrics[f"cascade.{JUDGE}.share_kept"] == SURE / (SURE + UNSURE)
    assert metrics[f"cascade.{JUDGE}.guaranteed_level"] == 0.8
    assert metrics[f"cascade.{JUDGE}.cost_saved_usd"] == pytest.approx(
        runs.summary()["cascade"][JUDGE]["cost_saved_usd"], rel=1e-3
    )
    assert tags[f"cascade.{JUDGE}"] == (
        "the first judge cheap kept 30 of 40 items (75%, confidence >= 1); agreement >= 0.8 with probability 0.9"
    )
