"""`annotate queue RUN --escalated JUDGE`: only the items a cascade judge sent to its strong judge go to the
annotation queue of the fake Langfuse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.annotation import mirrored_traces
from scoregate.store.run_store import RunStore
from support.cascade_project import JUDGE, SURE, UNSURE, make_cascade_project
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import point_at
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
Edit = Callable[[Path, Callable[[Any], None]], None]


def test_only_the_escalated_items_are_queued(
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    scoregate: Cli,
    runs: Runs,
    fake_langfuse: FakeLangfuse,
) -> None:
    make_cascade_project(project_dir, edit_yaml, scripted_server, monkeypatch)
    assert scoregate("run", "labelled", "--no-mlflow", "--no-langfuse", "--no-cache").code == 0
    assert scoregate("cascade", JUDGE, "--run", runs.latest(), "--save").code == 0
    point_at(monkeypatch, fake_langfuse)
    ran = scoregate("run", "labelled", "--no-mlflow", "--no-cache", "--prompt-source", "local")
    assert ran.code == 0, ran.output
    store = RunStore.open(project_dir / "runs", runs.latest())
    traces = mirrored_traces(store)
    assert len(traces) == SURE + UNSURE

    queued = scoregate("annotate", "queue", store.run_id, "--escalated", JUDGE)
    assert queued.code == 0, queued.output
    assert f"{UNSURE} traces added, 0 already queued" in queued.output
    assert f"only the items the cascade judge {JUDGE} escalated" in queued.output
    unsure = {traces[f"lab-{n:02d}"] for n in range(SURE, SURE + UNSURE)}
    assert {i["objectId"] for i in fake_langfuse.state.queue_items} == unsure
    assert fake_langfuse.validation_failures == []

    refused = scoregate("annotate", "queue", store.run_id, "--escalated", "ev_faithfulness_v1")
    assert refused.code == 2 and "has no `cascade:`" in refused.output
