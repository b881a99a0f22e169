"""A cascade judge end to end: a run over labelled items calibrates it, `scoregate cascade --save` binds the
threshold, and the next run asks the strong judge only for the items its first judge is unsure of."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

Cli = Callable[..., CliResult]
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


@pytest.fixture
def cascade_project(
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


def judge_requests(server: ScriptedOpenAI, model: str) -> int:
    """Judge requests (with a reply schema; the models' one-token check has none) to `model`."""
    return sum(1 for r in server.requests if r.body and r.body.get("model") == model and request_schema(r.body))


def test_a_calibrated_cascade_asks_the_strong_judge_only_when_its_first_judge_is_unsure(
    cascade_project: Path, scoregate: Cli, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    first = scoregate("run", "labelled", "--no-mlflow", "--no-cache")
    assert first.code == 0, first.output + first.err
    assert "ev_actionability_v1: no cascade calibration" in first.output
    assert judge_requests(scripted_server, "scripted-1") == SURE + UNSURE  # uncalibrated: the strong judge scores all
    assert judge_requests(scripted_server, "cheap-1") == 5 * (SURE + UNSURE)

    found = scoregate("cascade", JUDGE, "--run", runs.latest(), "--save")
    assert found.code == 0, found.output + found.err
    lines = found.out.splitlines()
    assert "  guarantee     agreement >= 0.8 with probability 0.9" in lines
    assert "  threshold     confidence >= 1: the first judge keeps 30 of 40 items (75%)," in lines
    assert "                which agree 1.000" in lines
    assert any(line.startswith("  cost saved    $") for line in lines), found.out
    assert all(len(line) <= 80 for line in lines if "cascade.json" not in line), found.out
    data = json.loads(scoregate("cascade", JUDGE, "--run", runs.latest(), "--json").out)
    assert data["choice"]["threshold"] == 1.0 and data["strong_agreement"] == 1.0
    # the strong judge cost c per item on 40 items; keeping 30 saves 30c less the first judge's calls
    cost = data["cost"]
    assert cost["saved"] == pytest.approx(30 * cost["strong_per_item"] - cost["first_cost"])
    assert cost["saved"] > 0

    scripted_server.requests.clear()
    second = scoregate("run", "labelled", "--no-mlflow", "--no-cache")
    assert second.code == 0, second.output + second.err
    said = second.output
    assert "the first judge cheap keeps items at confidence >= 1 (agreement >= 0.8 with probability 0.9" in said
    assert judge_requests(scripted_server, "scripted-1") == UNSURE
    assert judge_requests(scripted_server, "cheap-1") == 5 * (SURE + UNSURE)
    assert (
        "cascade ev_actionability_v1: the first judge cheap kept 30 of 40 items (75%, confidence >= 1; calibrated "
        "for agreement >= 0.8 with probability 0.9); the strong judge scored 10; judge cost saved $" in said
    )
    scores = {r["item_id"]: {s["name"]: s for s in r["scores"]} for r in runs.results()}
    kept, escalated = scores["lab-00"], scores["lab-35"]
    assert kept["actionability_score"]["comment"].startswith("[kept by the first judge cheap: confidence 1 >= 1]")
    assert escalated["actionability_score"]["comment"].startswith("[escalated: the first judge cheap was unsure")
    assert escalated["actionability_score"]["value"] == 1 != escalated["actionability_score_first"]["value"]


def test_too_few_labels_say_so_and_the_strong_judge_scores_everything(
    cascade_project: Path, scoregate: Cli, runs: Runs, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "labelled", "--limit", "8", "--no-mlflow", "--no-cache").code == 0
    found = scoregate("cascade", JUDGE, "--run", runs.latest(), "--save")
    assert found.code == 0, found.output
    said = found.output
    assert (
        "threshold none: 8 labelled items cannot guarantee agreement >= 0.8 with probability 0.9: it takes at least "
        "11 (the strong judge scores every item)" in said
    )
    scripted_server.requests.clear()
    assert scoregate("run", "labelled", "--limit", "8", "--no-mlflow", "--no-cache").code == 0
    assert judge_requests(scripted_server, "scripted-1") == 8


def test_a_calibration_set_without_labels_is_one_clear_line(cascade_project: Path, scoregate: Cli, runs: Runs) -> None:
    assert scoregate("run", "smoke_cascade", "--no-mlflow").code == 0
    refused = scoregate("cascade", JUDGE, "--run", runs.latest())
    assert refused.code == 1
    assert refused.err.startswith("error: no item of runs ")
    assert "has a human 'human_actionability' rating" in refused.output
    assert "Traceback" not in refused.err


def test_a_judge_without_cascade_is_refused(cascade_project: Path, scoregate: Cli) -> None:
    refused = scoregate("cascade", "ev_faithfulness_v1", "--run", "any")
    assert refused.code == 2
    assert "has no `cascade:`" in refused.err
