"""Two `scoregate harvest --apply` of one dataset at once: the one that writes second finds the dataset changed
since it read it and writes nothing (before, it appended the same production items again: duplicate ids)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app import harvest as harvest_module
from scoregate.app.harvest import harvest_dataset
from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.production_traffic import LIVE_PROMPT, add_live_experiment, publish_prompt, send_traffic
from support.projects import CliResult
from support.scripted_openai import ScriptedOpenAI

PROMPT = LIVE_PROMPT  # the prompt of the `live` experiment


def test_a_harvest_whose_dataset_changed_meanwhile_writes_nothing_and_says_so(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    langfuse_env: FakeLangfuse,
    scripted_server: ScriptedOpenAI,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", add_live_experiment)
    publish_prompt(langfuse_env, name=PROMPT, labels=["production"])
    talks = ["a database migration to Postgres 16", "the new pricing of the enterprise tier", "a GPU shortage in Q3"]
    inputs = [
        {"title": f"Episode {talk[:12]}", "transcript": f"Host: today, {talk}. Guest: it went well."} for talk in talks
    ]
    send_traffic(langfuse_env, scripted_server, inputs, prompt=PROMPT)
    dataset = project_dir / "datasets" / "smoke_v1.jsonl"
    before = len(dataset.read_text(encoding="utf-8").splitlines())
    fetch, other, fetches = harvest_module._candidates, [], []

    def other_harvest_applies_while_this_one_fetches(*args: Any, **kwargs: Any) -> Any:
        fetches.append(1)
        found = fetch(*args, **kwargs)
        if len(fetches) == 1:  # the command's own fetch: the other harvest runs whole, and writes, meanwhile
            other.append(harvest_dataset(project_dir, "smoke_v1", apply=True))
        return found

    monkeypatch.setattr(harvest_module, "_candidates", other_harvest_applies_while_this_one_fetches)
    result = scoregate("harvest", "smoke_v1", "--apply")

    assert other and other[0].applied and len(other[0].items) == 3
    assert result.code == 1, result.output
    assert "datasets/smoke_v1.jsonl changed while harvest ran" in result.output, result.output
    ids = [json.loads(line)["id"] for line in dataset.read_text(encoding="utf-8").splitlines()]
    assert len(ids) == before + 3 and len(set(ids)) == len(ids)
