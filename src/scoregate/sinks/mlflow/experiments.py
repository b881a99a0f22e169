"""Find or create scoregate's MLflow experiments, named to read in MLflow's list, tagged with the kind that makes
MLflow's UI open on their runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scoregate.sinks.mlflow.client import creation_lock

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
"""The kind of a scoregate experiment: runs with metrics, MLflow's "Machine learning" kind (`genai_development` is
for traced apps). MLflow 3 UIs without the GenAI / Model training switch open such an experiment on its Runs tab.
MLflow 3.17.2's UI ignores the tag (its switch is always on): it opens every experiment in the view the URL's
`workflowType` or the switch's last position names, GenAI by default: hence `ui_link`."""
UNSET_KINDS = frozenset({"", "genai_development_inferred", "custom_model_development_inferred", "no_inferred_type"})
"""Values that are no one's choice (absent, or what the UI inferred): scoregate replaces them. A kind a user set
in the UI (`genai_development`, `regression`, ...) is kept."""


def experiment_name(project: str | None, experiment: str) -> str:
    """Return the MLflow name of a scoregate experiment: `<experiment> (<project>)`.

    MLflow's experiments list shows about the first 15 characters of a name (checked in its 3.17 UI): the
    experiment leads, the project (which keeps two projects on one server apart) follows.
    """
    return f"{experiment} ({project or 'scoregate'})"


def earlier_experiment_name(project: str | None, experiment: str) -> str:
    """Return the name earlier versions gave the experiment: `<project>/<experiment>`."""
    return f"{project or 'scoregate'}/{experiment}"


def find_experiment(client: Any, project: str | None, experiment: str) -> Any | None:
    """Return the MLflow experiment of a scoregate experiment (under its earlier name if not mirrored since)."""
    found = client.get_experiment_by_name(experiment_name(project, experiment))
    return found or client.get_experiment_by_name(earlier_experiment_name(project, experiment))


def experiment_id(client: Any, name: str, *, uri: str, project_root: Path, earlier: str | None = None) -> str:
    """Return the id of MLflow experiment `name`, created if missing, its kind set to open on runs if unset.

    An experiment still named `earlier` (by an earlier version) is renamed to `name`: its id, runs and links stay.
    """
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        with creation_lock(uri):  # runs started at once create it once
            experiment = client.get_experiment_by_name(name)
            old = client.get_experiment_by_name(earlier) if experiment is None and earlier else None
            if old is not None and old.lifecycle_stage == "active":
                client.rename_experiment(old.experiment_id, name)
                experiment = client.get_experiment(old.experiment_id)
            if experiment is None:
                location = (project_root.resolve() / "mlartifacts").as_uri() if uri.startswith("sqlite:") else None
                tags = {EXPERIMENT_KIND_TAG: EXPERIMENT_KIND}
                return str(client.create_experiment(name, artifact_location=location, tags=tags))
    if experiment.tags.get(EXPERIMENT_KIND_TAG, "") in UNSET_KINDS:
        client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return str(experiment.experiment_id)


def ui_link(uri: str, experiment_id: str) -> str | None:
    """Return the MLflow UI address of an experiment's Runs tab, or None when the store has no known UI.

    The embedded store's UI is `make mlflow-ui` (127.0.0.1, port `MLFLOW_PORT`, default 5000); a server's is its
    tracking URI. `workflowType=machine_learning` makes MLflow 3.17's UI open the runs, not the GenAI overview.
    """
    if uri.startswith("sqlite:"):
        base = f"http://127.0.0.1:{os.environ.get('MLFLOW_PORT') or '5000'}"
    elif uri.startswith(("http://", "https://")):
        base = uri.rstrip("/")
    else:
        return None
    return f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
