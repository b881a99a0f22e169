"""`scoregate run --models a,b` runs the same items once per model; `scoregate rank` ranks the runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI


def add_second_model(edit_yaml: Callable[..., None], project_dir: Path) -> None:
    """Declare `scripted-b`: the same scripted endpoint under another model id."""

    def change(config: dict[str, Any]) -> None:
        config["models"]["scripted-b"] = {**config["models"]["scripted"], "model": "scripted-b-1"}

    edit_yaml(project_dir / "scoregate.yaml", change)


def test_one_run_per_model_on_the_same_items_then_a_ranking(
    scoregate: Callable[..., CliResult],
    scripted_server: ScriptedOpenAI,
    edit_yaml: Callable[..., None],
    project_dir: Path,
    runs: Runs,
) -> None:
    add_second_model(edit_yaml, project_dir)

    result = scoregate("run", "smoke", "--models", "scripted,scripted-b", "--no-mlflow")

    assert result.code == 0, result.output
    ids = runs.ids()
    assert len(ids) == 2
    models = {runs.manifest(run_id)["receipts"]["model"]["name"] for run_id in ids}
    assert models == {"scripted", "scripted-b"}
    item_sets = [{r["item_id"] for r in runs.results(run_id)} for run_id in ids]
    assert item_sets[0] == item_sets[1] and item_sets[0]
    task_models = {r.body["model"] for r in scripted_server.task_requests()}
    assert len(task_models) == 2
    assert "scoregate rank" in result.output

    ranked = scoregate("rank", *ids, "--metric", "WeightedQuality", "--json")
    assert ranked.code == 0, ranked.output
    ranking = json.loads(ranked.out)
    assert ranking["metric"] == "WeightedQuality"
    assert {row["run_id"] for row in ranking["runs"]} == set(ids)

    via_compare = scoregate("compare", *ids, "--rank", "--metric", "WeightedQuality", "--json", "--no-mlflow")
    assert via_compare.code == 0, via_compare.output
    assert json.loads(via_compare.out)["runs"] == ranking["runs"]


def test_rank_needs_two_runs(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("rank", "only-one")
    assert result.code == 1
    assert "ranking needs at least two runs" in result.output
