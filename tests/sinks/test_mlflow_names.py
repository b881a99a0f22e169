"""MLflow's lists tell scoregate's runs and experiments apart (checked through the MLflow client on a real store).

MLflow 3.17's UI cuts names in its lists (seen in the UI: about 21 characters of a run name, 15 of an experiment
name): runs are named model and prompt versions first, the run id last; experiments experiment first, the
project after. A run mirrored under the names of an earlier version is renamed in place, never duplicated.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from support.projects import CliResult, Runs

pytestmark = pytest.mark.usefixtures("mlflow_store")

RUN_LIST_CHARS = 21
"""What MLflow 3.17's runs list shows of a run name (`smoke-20261129-00345…`)."""
EXPERIMENT_LIST_CHARS = 15
"""What its experiments list shows of an experiment name (`podcast-summari…`)."""


def client() -> MlflowClient:
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def mlflow_run(run_id: str) -> Any:
    """The MLflow run mirrored from scoregate run `run_id` (found by its tag, in any experiment)."""
    found = client().search_runs(
        [e.experiment_id for e in client().search_experiments()], filter_string=f"tags.`scoregate.run_id` = '{run_id}'"
    )
    (only,) = found
    return only


def test_runs_of_other_models_or_prompt_versions_differ_where_mlflow_s_list_cuts_their_names(
    scoregate: Callable[..., CliResult], runs: Runs, project_dir: Path, edit_yaml: Callable[..., None]
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(other=c["models"]["scripted"]))
    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "counters", "--model", "other").code == 0
    edit_yaml(project_dir / "prompts" / "summarization-catchup.yaml", lambda p: p["config"].update(temperature=0.3))
    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "counters", "--limit", "2").code == 0

    ids = sorted(runs.ids(), key=lambda r: runs.manifest(r)["started_at"])
    names = [mlflow_run(run_id).info.run_name for run_id in ids]
    shown = [name[:RUN_LIST_CHARS] for name in names]
    assert len(set(shown[:3])) == 3, shown  # model, then prompt versions, lead the name
    assert names[1].startswith("other · ")
    for run_id, name in zip(ids, names, strict=True):
        versions = ", ".join(f"@{v}" for v in runs.summary(run_id)["prompts"].values())
        assert name.startswith(f"{runs.manifest(run_id)['receipts']['model']['name']} · {versions} · "), name
        assert name.endswith(f" · {run_id}"), name  # the run id (experiment, date, time) last
    assert " · limit 2 · " in names[3] and " · limit " not in names[2]


def test_experiment_names_differ_where_mlflow_s_list_cuts_them(scoregate: Callable[..., CliResult], runs: Runs) -> None:
    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "smoke").code == 0
    names = sorted(e.name for e in client().search_experiments() if e.name != "Default")
    assert names == ["counters (scripted-project)", "smoke (scripted-project)"]
    assert len({name[:EXPERIMENT_LIST_CHARS] for name in names}) == 2


def test_a_run_mirrored_under_the_earlier_names_is_renamed_in_place(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters").code == 0
    run_id = runs.latest()
    before = mlflow_run(run_id)
    mlflow = client()
    experiment_id = before.info.experiment_id
    mlflow.rename_experiment(experiment_id, "scripted-project/counters")  # as an earlier version named them
    versions = ", ".join(f"{n}@{v}" for n, v in runs.summary(run_id)["prompts"].items())
    mlflow.set_tag(before.info.run_id, "mlflow.runName", f"{run_id} · scripted · {versions}")

    assert scoregate("mlflow-sync", run_id).code == 0

    after = mlflow_run(run_id)  # exactly one run holds the scoregate run: the same one
    assert (after.info.run_id, after.info.experiment_id) == (before.info.run_id, experiment_id)
    assert mlflow.get_experiment(experiment_id).name == "counters (scripted-project)"
    assert after.info.run_name == before.info.run_name and after.info.run_name.startswith("scripted · @")
    assert [e.name for e in mlflow.search_experiments() if e.name != "Default"] == ["counters (scripted-project)"]
