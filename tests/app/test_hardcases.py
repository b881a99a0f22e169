"""`scoregate hardcases add`: a run's worst items become hard cases, worst first, deduplicated, source recorded."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.hardcases import parse_where
from scoregate.catalog.datasets import iter_items
from support.calibration_replies import script_replies, smoke_titles
from support.projects import REPO, CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
QUALITY = {"smoke-001": 2, "smoke-002": 3, "smoke-003": 5, "smoke-005": 4, "smoke-006": 1, "smoke-007": 5}
"""Every judge score of each item, so its WeightedQuality (weights summing to 1) is this number."""


@pytest.fixture
def scored_run(project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs) -> str:
    """A smoke run whose items have the WeightedQuality of QUALITY, and the shipped (empty) hardcases dataset."""
    for suffix in (".jsonl", ".yaml"):
        shutil.copy(REPO / "datasets" / f"hardcases{suffix}", project_dir / "datasets" / f"hardcases{suffix}")
    (project_dir / "datasets" / "hardcases.jsonl").write_text("", encoding="utf-8")
    titles = smoke_titles(project_dir)
    script_replies(scripted_server, {}, {titles[item_id]: score for item_id, score in QUALITY.items()})
    result = scoregate("run", "smoke", "--no-mlflow")
    assert result.code == 0, result.output
    return runs.latest()


def hardcases(project_dir: Path) -> list[dict[str, Any]]:
    """The hard-case items as a dataset reader sees them (each line validated)."""
    path = project_dir / "datasets" / "hardcases.jsonl"
    return [item.model_dump() for _line, item in iter_items(path)]


def smoke_items(project_dir: Path) -> dict[str, dict[str, Any]]:
    """The test project's smoke items by id."""
    lines = (project_dir / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item for item in map(json.loads, lines)}


def test_the_worst_items_are_appended_worst_first_with_their_source(
    scoregate: Cli, scored_run: str, project_dir: Path
) -> None:
    result = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality < 3.5")
    assert result.code == 0, result.output
    assert "3 of 6 items match WeightedQuality < 3.5" in result.output
    assert "appended 3 to" in result.output
    added = hardcases(project_dir)
    assert [item["id"] for item in added] == ["smoke-006", "smoke-001", "smoke-002"]
    source = smoke_items(project_dir)["smoke-006"]
    assert added[0]["input"] == source["input"]
    assert added[0]["metadata"]["source_run"] == scored_run
    assert added[0]["metadata"]["source_item_id"] == "smoke-006"
    assert added[0]["metadata"]["source_dataset"] == "smoke_v1"
    assert added[0]["metadata"]["source_metric"] == {"name": "WeightedQuality", "value": 1.0}
    validated = scoregate("validate")
    assert validated.code == 0, validated.output
    assert "dataset hardcases: 3 items" in validated.output

    again = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality <= 4", "--json")
    report = json.loads(again.out)
    assert [a["id"] for a in report["appended"]] == ["smoke-005"]
    assert report["already_present"] == ["smoke-006", "smoke-001", "smoke-002"]
    assert [item["id"] for item in hardcases(project_dir)] == ["smoke-006", "smoke-001", "smoke-002", "smoke-005"]


def test_limit_keeps_the_worst_and_greater_than_picks_the_highest_first(
    scoregate: Cli, scored_run: str, project_dir: Path
) -> None:
    limited = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality<3.5", "--limit", "1")
    assert limited.code == 0, limited.output
    assert "left 2 matching beyond --limit" in limited.output
    assert [item["id"] for item in hardcases(project_dir)] == ["smoke-006"]

    dry = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality >= 4", "--dry-run", "--json")
    report = json.loads(dry.out)
    assert [(a["id"], a["value"]) for a in report["appended"]] == [("smoke-003", 5), ("smoke-007", 5), ("smoke-005", 4)]
    assert [item["id"] for item in hardcases(project_dir)] == ["smoke-006"]  # a dry run writes nothing


def test_items_whose_metric_is_null_are_counted_not_chosen(
    scoregate: Cli, scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs, scored_run: str
) -> None:
    titles = smoke_titles(project_dir)
    script_replies(scripted_server, {}, {**{titles[i]: s for i, s in QUALITY.items()}, titles["smoke-006"]: None})
    assert scoregate("run", "smoke", "--no-mlflow", "--no-cache").code == 0
    result = scoregate("hardcases", "add", runs.latest(), "--where", "WeightedQuality < 3.5", "--json")
    report = json.loads(result.out)
    assert [a["id"] for a in report["appended"]] == ["smoke-001", "smoke-002"]
    assert report["null_metric"] == 1 and "missing parts" in next(iter(report["null_reasons"]))
    shown = scoregate("hardcases", "add", runs.latest(), "--where", "WeightedQuality < 3.5")
    assert "1 not considered: WeightedQuality is null" in shown.output


@pytest.mark.parametrize(
    "where",
    [
        "WeightedQuality <> 3",
        "__import__('os').system('true') < 1",
        "WeightedQuality < three",
        "WeightedQuality < 3 or 1",
    ],
)
def test_a_where_outside_the_grammar_is_named_and_never_evaluated(scoregate: Cli, where: str) -> None:
    result = scoregate("hardcases", "add", "any-run", "--where", where)
    assert result.code == 1
    assert f"cannot read --where {where!r}" in result.output
    assert "<score> <op> <number>" in result.output


def test_an_unknown_score_is_named_and_nothing_is_written(scoregate: Cli, scored_run: str, project_dir: Path) -> None:
    result = scoregate("hardcases", "add", scored_run, "--where", "Nope < 3")
    assert result.code == 1
    assert f"run {scored_run} has no score 'Nope'" in result.output
    assert hardcases(project_dir) == []


def test_items_the_dataset_schema_rejects_are_named_and_none_is_appended(
    scoregate: Cli, scored_run: str, project_dir: Path, edit_yaml: Callable[..., None]
) -> None:
    def no_feed_ids(meta: dict[str, Any]) -> None:
        del meta["input_schema"]["properties"]["feed_id"]

    edit_yaml(project_dir / "datasets" / "hardcases.yaml", no_feed_ids)
    result = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality < 3.5")
    assert result.code == 1
    assert "item 'smoke-006': input: Additional properties are not allowed ('feed_id' was unexpected)" in result.output
    assert "nothing was appended" in result.output
    assert hardcases(project_dir) == []


def test_a_hardcases_path_that_is_a_folder_is_named(scoregate: Cli, scored_run: str, project_dir: Path) -> None:
    path = project_dir / "datasets" / "hardcases.jsonl"
    path.unlink()
    path.mkdir()

    result = scoregate("hardcases", "add", scored_run, "--where", "WeightedQuality < 3")

    assert result.code == 1, result.output
    assert f"{path}: is not a file, so no hard case can be appended to it" in result.output


def test_the_where_grammar() -> None:
    condition = parse_where(" faithfulness_score>=4.2 ")
    assert (condition.metric, condition.op, condition.threshold) == ("faithfulness_score", ">=", 4.2)
    assert condition.holds(4.2) and not condition.holds(4.1)
    assert parse_where("hallucination_count == 0").holds(0.0)
    assert parse_where("x < -1e-3").threshold == -0.001
