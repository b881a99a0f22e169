"""A stored run of gold_v1 whose outputs are the gold summaries (what `metadata.human` rates), judged by a script."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.calibration_replies import script_replies
from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]

GOLD_JUDGE = {"gold-001": 4, "gold-002": 4, "gold-003": 3, "gold-004": 5, "gold-005": 2, "gold-006": 5}
"""What the scripted judge answers for each gold summary (every judge score of the item)."""


def gold_items() -> list[dict[str, Any]]:
    """The shipped gold_v1 items."""
    lines = (REPO / "datasets" / "gold_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def gold_run(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Callable[..., None]
) -> str:
    """A run of gold_v1 whose outputs are the gold summaries (what metadata.human rates), judged per GOLD_JUDGE."""
    for suffix in (".jsonl", ".yaml"):
        shutil.copy(REPO / "datasets" / f"gold_v1{suffix}", project_dir / "datasets" / f"gold_v1{suffix}")

    def add_gold(config: dict[str, Any]) -> None:
        config["experiments"]["gold"] = {**config["experiments"]["smoke"], "dataset": "gold_v1", "gates": []}

    edit_yaml(project_dir / "scoregate.yaml", add_gold)
    items = gold_items()
    outputs = {item["input"]["title"]: item["expected_output"] for item in items}
    script_replies(scripted_server, outputs, {item["expected_output"][:300]: GOLD_JUDGE[item["id"]] for item in items})
    result = scoregate("run", "gold", "--no-mlflow")
    assert result.code == 0, result.output
    return runs.latest()
