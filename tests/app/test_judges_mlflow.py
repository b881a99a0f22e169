"""The same judges in MLflow's judge registry (MLflow 3.17, the embedded sqlite store), in step with Langfuse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.genai.scorers.registry import list_scorer_versions
from mlflow.tracking import MlflowClient

from scoregate.app.judges_mlflow import EXPERIMENT
from scoregate.app.judges_sync import sync_project_judges
from scoregate.sinks.mlflow.client import tracking_uri
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at

JUDGE = "ev_actionability_v1"


@pytest.fixture
def fake(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangfuse]:
    with FakeLangfuse(server_mode="new") as server:
        point_at(monkeypatch, server)
        yield server


def versions(root: Path) -> list[tuple[int, str]]:
    client = MlflowClient(tracking_uri=tracking_uri(root))
    experiment = client.get_experiment_by_name(EXPERIMENT)
    found = list_scorer_versions(name="actionability_score", experiment_id=experiment.experiment_id)
    return sorted((version, judge.instructions) for judge, version in found)


def test_apply_registers_each_judge_version_once_in_mlflow(
    fake: FakeLangfuse, project_dir: Path, mlflow_store: str
) -> None:
    first = sync_project_judges(project_dir, [JUDGE])
    again = sync_project_judges(project_dir, [JUDGE])
    judge = project_dir / "evaluators" / f"{JUDGE}.yaml"
    judge.write_text(judge.read_text(encoding="utf-8").replace("Judge actionability only;", "Judge strictly;"))
    changed = sync_project_judges(project_dir, [JUDGE])

    assert [(j.name, j.action, j.version) for j in first.mlflow] == [("actionability_score", "registered", 1)]
    assert [(j.action, j.version) for j in again.mlflow] == [("unchanged", 1)]
    assert [(j.action, j.version) for j in changed.mlflow] == [("registered", 2)]
    held = versions(project_dir)
    assert [v for v, _ in held] == [1, 2]
    assert "Judge strictly;" in held[1][1] and "{{ outputs }}" in held[1][1] and "{{ inputs }}" in held[1][1]
    assert first.mlflow_problem is None


def test_a_plan_creates_no_mlflow_store(fake: FakeLangfuse, project_dir: Path) -> None:
    report = sync_project_judges(project_dir, [JUDGE], dry_run=True)

    assert [(j.action, j.version) for j in report.mlflow] == [("to register", None)]
    assert not Path(tracking_uri(project_dir).removeprefix("sqlite:///")).exists()
