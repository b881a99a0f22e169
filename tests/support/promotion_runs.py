"""Promotion runs: a project with a prompt uploaded to the fake Langfuse, the MLflow client, a logged run."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from scoregate.app.promotion_evidence import experiment_gates_hash
from scoregate.catalog.models import PromptSpec
from scoregate.integrations.langfuse.prompts_sync import to_langfuse
from scoregate.sinks.mlflow.run_mirror import RUN_ID_TAG
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.projects import ALL_GATES

PROMPT = "summarization-catchup"


COUNTER_GATES = ["sections_present", "tldr_caps_met"]


def upload(fake: FakeLangfuse, spec: PromptSpec, labels: list[str]) -> None:
    """Store a new version of a prompt in the fake Langfuse, as `scoregate prompts sync` would."""
    body = to_langfuse(spec)
    fake.state.create_prompt(
        {"name": spec.name, "prompt": body.prompt, "type": body.type, "config": body.config, "labels": labels}
    )


@pytest.fixture
def project(
    project_dir: Path,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
) -> Path:
    """The test project gated on `smoke` and `counters`, with Langfuse on.

    In Langfuse the prompt under test has v1 (production) and v2 (candidate, a lower temperature); the other
    prompt of the route has v1 (production).
    """
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={PROMPT: ["smoke", "counters"]}))
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SCOREGATE_USER", "alice")
    prompts = load_project(project_dir).prompts
    upload(fake_langfuse, prompts[PROMPT], ["production"])
    colder = prompts[PROMPT].config.model_copy(update={"temperature": 0.1})
    upload(fake_langfuse, prompts[PROMPT].model_copy(update={"config": colder}), ["candidate"])
    upload(fake_langfuse, prompts["summarization-howto"], ["production"])
    return project_dir


def tracking() -> MlflowClient:
    """A client of this test's MLflow store (named explicitly: `mlflow.set_tracking_uri` is process-global)."""
    return MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])


def logged_run(
    root: Path,
    experiment: str,
    *,
    gates: dict[str, str] | None = None,
    version: str = "2",
    limit: str = "None",
    gates_hash: str | None = None,
    model: str = "scripted",
    tags: dict[str, str] | None = None,
    model_name: str | None = None,
) -> str:
    """Log an evidence run through MlflowClient with the tags and params scoregate's MLflow mirror writes."""
    project = load_project(root)
    statuses = gates or dict.fromkeys(COUNTER_GATES if experiment == "counters" else ALL_GATES[:5], "pass")
    words = [s.split(" ", 1)[0] for s in statuses.values()]  # `pass on 5 of 6, 1 quarantined` is a pass
    verdict = "pass" if all(w == "pass" for w in words) else "fail" if "fail" in words else "incomplete"
    client = tracking()
    name = f"{project.config.project}/{experiment}"
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found else client.create_experiment(name)
    scoregate_run = f"{experiment}-logged-{len(client.search_runs([experiment_id]))}"
    run = client.create_run(experiment_id, run_name=scoregate_run)
    tags = {RUN_ID_TAG: scoregate_run, "scoregate.experiment": experiment, "scoregate.verdict": verdict,
            f"prompt.{PROMPT}.version": version, **{f"gate.{g}": s for g, s in statuses.items()},
            **(tags or {})}  # fmt: skip
    for key, value in tags.items():
        client.set_tag(run.info.run_id, key, value)
    client.log_param(run.info.run_id, "gates_hash", gates_hash or experiment_gates_hash(project, experiment))
    client.log_param(run.info.run_id, "limit", limit)
    client.log_param(run.info.run_id, "model", model)
    if model_name is not None:
        client.log_param(run.info.run_id, "model_name", model_name)
    client.set_terminated(run.info.run_id, "FINISHED")
    return str(run.info.run_id)


def gate_promotion_on(
    project_dir: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None], experiments: list[str]
) -> None:
    """Make the project's promotion of PROMPT need the gates of `experiments` to pass."""
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={PROMPT: experiments}))
