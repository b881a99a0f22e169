"""A cascade judge end to end: a run over labelled items calibrates it, `scoregate cascade --save` binds the
threshold, and the next run asks the strong judge only for the items its first judge is unsure of."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.cascade_project import JUDGE, SURE, UNSURE, make_cascade_project
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, request_schema

Cli = Callable[..., CliResult]
Edit = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def cascade_project(
    project_dir: Path, edit_yaml: Edit, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The test project with 40 labelled items, a `cheap` first judge and the actionability judge as a cascade."""
    return make_cascade_project(project_dir, edit_yaml, scripted_server, monkeypatch)


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


def test_a_threshold_saved_for_another_version_of_the_judge_is_not_used(
    cascade_project: Path, scoregate: Cli, runs: Runs, edit_yaml: Edit, scripted_server: ScriptedOpenAI
) -> None:
    assert scoregate("run", "labelled", "--no-mlflow", "--no-cache").code == 0
    assert scoregate("cascade", JUDGE, "--run", runs.latest(), "--save").code == 0
    edit_yaml(cascade_project / "evaluators" / f"{JUDGE}.yaml", lambda judge: judge["cascade"].update(target=0.7))
    scripted_server.requests.clear()
    again = scoregate("run", "labelled", "--no-mlflow", "--no-cache")
    assert again.code == 0, again.output
    assert (
        "cascade ev_actionability_v1: the cascade calibration no longer holds: its prompt, rubric or settings "
        "changed since the calibration" in again.output
    )
    assert judge_requests(scripted_server, "scripted-1") == SURE + UNSURE
