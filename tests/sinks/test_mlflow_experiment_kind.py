"""MLflow's UI shows scoregate's runs, not an empty GenAI overview: `runs show` links to the experiment's Runs
tab, and the experiments declare the "Machine learning" kind on a real sqlite store (new ones, ones made by an older
scoregate; a kind the user chose is kept). The link opened in MLflow's own UI in a browser is in
tests/e2e/test_mlflow_experiment_kind_ui.py."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from mlflow.tracking import MlflowClient

from support.projects import CliResult, Runs

pytestmark = pytest.mark.usefixtures("mlflow_store")
KIND = "mlflow.experimentKind"


def client() -> MlflowClient:
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def kind_of(name: str) -> str | None:
    experiment = client().get_experiment_by_name(name)
    assert experiment is not None, name
    return experiment.tags.get(KIND)


def test_a_new_experiment_and_the_comparisons_one_declare_the_machine_learning_kind(
    scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "counters").code == 0
    a, b = runs.ids()

    compared = scoregate("compare", a, b)

    assert compared.code == 0, compared.output
    # the kind MLflow 3 UIs without the GenAI / Model training switch open on the Runs tab (sinks/mlflow/experiments.py)
    assert kind_of("counters (scripted-project)") == "custom_model_development"
    assert kind_of("comparisons (scripted-project)") == "custom_model_development"


def test_an_experiment_made_before_gets_the_kind_and_a_users_choice_is_kept(
    scoregate: Callable[..., CliResult],
) -> None:
    mlflow = client()
    mlflow.create_experiment("scripted-project/counters")  # as scoregate made (and named) it before: no kind
    mlflow.create_experiment("smoke (scripted-project)", tags={KIND: "genai_development"})  # chosen in the UI

    assert scoregate("run", "counters").code == 0
    assert scoregate("run", "smoke").code == 0

    assert kind_of("counters (scripted-project)") == "custom_model_development"  # renamed, then given the kind
    assert kind_of("smoke (scripted-project)") == "genai_development"


def test_runs_show_links_to_the_runs_tab_of_the_experiment(
    scoregate: Callable[..., CliResult], runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_PORT", "5123")
    assert scoregate("run", "counters").code == 0
    experiment = client().get_experiment_by_name("counters (scripted-project)")
    assert experiment is not None

    shown = scoregate("runs", "show", runs.latest())

    assert shown.code == 0, shown.output
    link = f"http://127.0.0.1:5123/#/experiments/{experiment.experiment_id}/runs?workflowType=machine_learning"
    assert f"mlflow: the experiment's runs in the UI: {link}" in shown.output
