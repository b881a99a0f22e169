"""The forecast of a run with a cascade judge counts its first judge's samples, and its strong judge on the share
the saved threshold does not keep (on every item, an upper bound, without one)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.forecast_runs import ITEMS, run_cli
from support.forecast_runs import priced as priced  # the fixture
from support.scripted_openai import ScriptedOpenAI


def test_a_cascade_judge_s_first_judge_is_forecast_at_its_samples_per_item(
    priced: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]
) -> None:
    def cheap(config: dict[str, Any]) -> None:
        config["models"]["cheap"] = {**config["models"]["scripted"], "model": "cheap-1"}

    def cascade(judge: dict[str, Any]) -> None:
        judge["cascade"] = {"first_model": "cheap", "samples": 5, "target": 0.8}

    edit_yaml(priced / "scoregate.yaml", cheap)
    edit_yaml(priced / "evaluators" / "ev_actionability_v1.yaml", cascade)
    shown = run_cli(priced, "run", "smoke", "--dry-run", "--json")
    assert shown.code == 0, shown.output
    groups = {
        g["model"]: g["calls"] for g in json.loads(shown.out)["groups"] if g["stage"] == "judge:ev_actionability_v1"
    }
    assert groups == {"scripted": ITEMS, "cheap": 5 * ITEMS}  # the strong judge counted on every item: an upper bound


def test_without_a_saved_threshold_the_forecast_says_it_is_an_upper_bound_and_why(
    priced: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]
) -> None:
    def cheap(config: dict[str, Any]) -> None:
        config["models"]["cheap"] = {**config["models"]["scripted"], "model": "cheap-1"}

    edit_yaml(priced / "scoregate.yaml", cheap)
    edit_yaml(
        priced / "evaluators" / "ev_actionability_v1.yaml",
        lambda judge: judge.update(cascade={"first_model": "cheap", "samples": 5, "target": 0.8}),
    )
    shown = json.loads(run_cli(priced, "run", "smoke", "--dry-run", "--json").out)
    (cascade,) = shown["cascades"]
    assert cascade["evaluator"] == "ev_actionability_v1" and cascade["share_kept"] is None
    assert cascade["strong_calls"] == ITEMS and cascade["first_calls"] == 5 * ITEMS
    assert cascade["basis"].startswith("upper bound: the strong judge on every item: no cascade calibration (")
    said = run_cli(priced, "run", "smoke", "--dry-run").out
    assert "cascade ev_actionability_v1: upper bound: the strong judge on every item: no cascade" in said


def test_a_saved_threshold_forecasts_the_strong_judge_on_the_share_it_does_not_keep(
    project_dir: Path,
    edit_yaml: Callable[[Path, Callable[[Any], None]], None],
    scripted_server: ScriptedOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from support.cascade_project import JUDGE, SURE, UNSURE, make_cascade_project

    project = make_cascade_project(project_dir, edit_yaml, scripted_server, monkeypatch)
    assert run_cli(project, "run", "labelled", "--no-mlflow", "--no-cache").code == 0
    run_id = sorted(p.name for p in (project / "runs").iterdir() if p.is_dir())[-1]
    assert run_cli(project, "cascade", JUDGE, "--run", run_id, "--save").code == 0  # keeps 30 of 40 labels: 75%

    shown = json.loads(run_cli(project, "run", "labelled", "--dry-run", "--json", "--no-cache").out)
    items = SURE + UNSURE
    groups = {g["model"]: g["calls"] for g in shown["groups"] if g["stage"] == f"judge:{JUDGE}"}
    # expected calls = first judge samples × items + strong judge × (1 − kept share) × items
    assert groups == {"cheap": 5 * items, "scripted": round(items * (1 - 0.75))}
    (cascade,) = shown["cascades"]
    assert (cascade["share_kept"], cascade["strong_calls"], cascade["first_calls"]) == (0.75, UNSURE, 5 * items)
    assert cascade["basis"] == (
        "expected: the strong judge on 25% of the items (the saved threshold keeps 75% of its 40 calibration labels)"
    )
