"""A project with a cascade judge: 40 labelled items, a `cheap` first judge sure on 30 of them, a strong judge that
agrees with the humans (tests/app/test_cascade_runs.py, tests/e2e/test_annotate_escalated.py)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import REPO
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

Edit = Callable[[Path, Callable[[Any], None]], None]
JUDGE = "ev_actionability_v1"
SURE, UNSURE = 30, 10
MARK = re.compile(r"<!-- (lab-\d+) -->")
PRICE = {"input_cost_per_mtok": 1.0, "output_cost_per_mtok": 2.0}
CHEAP_PRICE = {"input_cost_per_mtok": 0.1, "output_cost_per_mtok": 0.2}


def labelled_items() -> list[dict[str, Any]]:
    """40 items built on the gold summaries, each marked so a scripted judge can tell them apart; human 1-5."""
    gold = [json.loads(line) for line in (REPO / "datasets" / "gold_v1.jsonl").read_text().splitlines() if line]
    items = []
    for n in range(SURE + UNSURE):
        base = gold[n % len(gold)]
        item_id = f"lab-{n:02d}"
        items.append({
            **base, "id": item_id, "expected_output": f"{base['expected_output']}\n\n<!-- {item_id} -->",
            "metadata": {**base["metadata"], "human": {"actionability": 1 + n % 5}},
        })  # fmt: skip
    return items


def judges_answer(server: ScriptedOpenAI) -> None:
    """The strong judge (scripted-1) agrees with the humans; the first (cheap-1) too on the first 30 items, every
    time, and wavers through the four other answers on the rest (so it is unsure, and wrong)."""
    human = {item["id"]: item["metadata"]["human"]["actionability"] for item in labelled_items()}
    asked: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return markdown_summary(body)
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        item = MARK.search(text)
        score = human[item.group(1)] if item else 5
        if body["model"] == "cheap-1" and item and int(item.group(1)[4:]) >= SURE:
            others = [v for v in range(1, 6) if v != score]
            score = others[asked[item.group(1)] % 4]
            asked[item.group(1)] += 1
        return json.dumps(json_for_schema(schema, score=score))

    server.responder = reply


def make_cascade_project(
    project_dir: Path, edit_yaml: Edit, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The test project with 40 labelled items, a `cheap` first judge and the actionability judge as a cascade."""
    monkeypatch.setenv("COLUMNS", "80")
    shutil.copy(REPO / "datasets" / "gold_v1.yaml", project_dir / "datasets" / "labelled_v1.yaml")
    lines = [json.dumps(item) for item in labelled_items()]
    (project_dir / "datasets" / "labelled_v1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def change(config: dict[str, Any]) -> None:
        strong = config["models"]["scripted"]
        config["models"]["scripted"] = {**strong, **PRICE}
        config["models"]["cheap"] = {**strong, "model": "cheap-1", **CHEAP_PRICE}
        route = config["experiments"]["smoke"]["prompt"]
        config["experiments"]["labelled"] = {
            "dataset": "labelled_v1", "prompt": route, "output_from": "expected_output", "evaluators": [JUDGE],
        }  # fmt: skip
        config["experiments"]["smoke_cascade"] = {"dataset": "smoke_v1", "prompt": route, "evaluators": [JUDGE]}
        config["canaries"] = {JUDGE: {"experiment": "labelled", "human_key": "human_actionability"}}

    edit_yaml(project_dir / "scoregate.yaml", change)

    def cascade(judge: dict[str, Any]) -> None:
        judge["cascade"] = {"first_model": "cheap", "samples": 5, "target": 0.8, "delta": 0.1}

    edit_yaml(project_dir / "evaluators" / f"{JUDGE}.yaml", cascade)
    judges_answer(scripted_server)
    return project_dir
