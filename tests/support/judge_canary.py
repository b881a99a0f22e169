"""A judge canary project: the gold items pinned to a judge, human scores, scripted judge answers, a baseline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

Cli = Callable[..., CliResult]


Edit = Callable[[Path, Callable[[Any], None]], None]


JUDGE = "ev_actionability_v1"


PROMPT = "summarization-catchup"


HUMAN = {"gold-001": 5, "gold-002": 4, "gold-003": 4, "gold-004": 5, "gold-005": 3, "gold-006": 5}
"""metadata.human.actionability of each gold_v1 item."""


LOST = {"gold-001": 3, "gold-002": 5, "gold-003": 5, "gold-004": 3, "gold-005": 5, "gold-006": 2}
"""A judge that has lost the humans: it ranks the gold summaries nearly the other way round."""


def gold() -> list[dict[str, Any]]:
    """The shipped gold_v1 items."""
    text = (REPO / "datasets" / "gold_v1.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def judge_answers(server: ScriptedOpenAI, scores: dict[str, int]) -> None:
    """Make the judges answer `scores[item]` for the gold summary of each item (5 for any other output)."""
    markers = {item["expected_output"][:300]: scores[item["id"]] for item in gold()}

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return markdown_summary(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        score = next((s for marker, s in markers.items() if marker in text), 5)
        return json.dumps(json_for_schema(schema, score=score))

    server.responder = reply


@pytest.fixture
def pinned(project_dir: Path, edit_yaml: Edit) -> Path:
    """The test project with gold_v1, a `gold_judges` experiment, and the actionability judge pinned to it."""
    for suffix in (".jsonl", ".yaml"):
        shutil.copy(REPO / "datasets" / f"gold_v1{suffix}", project_dir / "datasets" / f"gold_v1{suffix}")

    def change(config: dict[str, Any]) -> None:
        route = config["experiments"]["smoke"]["prompt"]
        config["experiments"]["gold_judges"] = {
            "dataset": "gold_v1", "prompt": route, "output_from": "expected_output", "evaluators": [JUDGE],
        }  # fmt: skip
        config["canaries"] = {JUDGE: {"experiment": "gold_judges", "human_key": "human_actionability"}}

    edit_yaml(project_dir / "scoregate.yaml", change)
    return project_dir


def calibrate_baseline(scoregate: Cli, runs: Runs) -> dict[str, Any]:
    """Run gold_judges and save its calibration; return the saved record of actionability_score."""
    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0
    saved = scoregate("calibrate", "--run", runs.latest(), "--judge-key", "actionability_score",
                      "--human-key", "human_actionability", "--save")  # fmt: skip
    assert saved.code == 0, saved.output
    return dict(
        json.loads((runs.root.parent / "calibrations" / f"{JUDGE}.json").read_text())["scores"]["actionability_score"]
    )
