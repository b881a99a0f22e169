"""A mirrored run reads well on Langfuse v4's Experiments page: its Description column shows the run's description.

The page reads the description as `any(experiment_description)` over every span of the experiment (Langfuse's
`ExperimentsAggregationQueryBuilder`; a span without `langfuse.experiment.description` holds ''), so every
span a mirror records in an item's trace carries it, not only the SDK runner's two spans. The fake Langfuse
shows the description only when every span agrees (fake_langfuse/storage.py, `experiments`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse
from scoregate.store.description import RunDescription
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at

DESCRIPTION = "langfuse.experiment.description"


def test_the_experiments_page_shows_the_run_s_description(
    project_dir: Path, fake_langfuse: FakeLangfuse, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = RunOptions(
        prompts=RunOptions.PromptSource(source="local"),
        mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    )
    store = run_experiment(project_dir, "smoke", local).store
    point_at(monkeypatch, fake_langfuse)
    report = mirror_run_to_langfuse(store, load_project(project_dir))
    assert report.complete, report.lines()

    (experiment,) = fake_langfuse.state.experiments().values()
    expected = RunDescription(store.manifest_record).paragraph()
    assert expected and experiment["description"] == expected
    spans = [s for s in fake_langfuse.state.spans if s["attributes"].get("langfuse.experiment.id") == experiment["id"]]
    generations = [s for s in spans if s["attributes"].get("langfuse.observation.type") == "generation"]
    assert generations and all(s["attributes"].get(DESCRIPTION) == expected for s in spans)
    assert fake_langfuse.validation_failures == []
