"""`annotate queue RUN --labels N ...`: exactly the items `scoregate plan --labels N` chooses go to the queue."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.app.annotation import mirrored_traces
from scoregate.store.run_store import RunStore
from support.fake_langfuse import FakeLangfuse
from support.label_plan_project import label_plan_run
from support.langfuse_env import point_at
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
ASK = ("--judge-key", "actionability_score", "--human-key", "human_actionability", "--pass-at", "4")


def test_the_planned_items_and_only_they_are_queued(
    project_dir: Path,
    scripted_server: ScriptedOpenAI,
    scoregate: Cli,
    runs: Runs,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point_at(monkeypatch, fake_langfuse)
    label_plan_run(project_dir, scripted_server, scoregate, runs, "--prompt-source", "local")
    store = RunStore.open(project_dir / "runs", runs.latest())
    planned = json.loads(scoregate("plan", "smoke", "--labels", "2", *ASK, "--json").out)
    chosen = [item for items in planned["chosen"].values() for item in items]
    assert len(chosen) == 2

    queued = scoregate("annotate", "queue", store.run_id, "--labels", "2", *ASK)
    assert queued.code == 0, queued.output
    assert "only the items the label plan chose" in queued.output and "2 traces added" in queued.output
    traces = mirrored_traces(store)
    assert {i["objectId"] for i in fake_langfuse.state.queue_items} == {traces[item] for item in chosen}
    assert fake_langfuse.validation_failures == []
