"""`scoregate plan EXPERIMENT --detect D`: items × repeats from a stored run's variance, checked by hand."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema

Cli = Callable[..., CliResult]
Z = 1.959964 + 0.841621  # two-sided 5%, power 0.8


def wavering_judges(server: ScriptedOpenAI) -> None:
    """Judges whose score depends on the item and, by a little, on how often it was asked (repeats differ)."""
    asked: Counter[str] = Counter()

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return markdown_summary(body)
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        key = text[-400:]
        asked[key] += 1
        score = 1 + (sum(map(ord, key)) + asked[key] // 2) % 5
        return json.dumps(json_for_schema(schema, score=score))

    server.responder = reply


def values_by_hand(runs: Runs, metric: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for row in runs.results():
        for score in row["scores"]:
            if score["name"] == metric and score["value"] is not None:
                out.setdefault(row["item_id"], []).append(float(score["value"]))
    return out


@pytest.fixture
def planned(
    project_dir: Path, scoregate: Cli, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    wavering_judges(scripted_server)
    assert scoregate("run", "smoke", "--repeat", "3", "--no-mlflow").code == 0


def test_the_plan_s_items_are_the_normal_formula_on_the_run_s_variance(
    planned: None, scoregate: Cli, runs: Runs
) -> None:
    found = scoregate("plan", "smoke", "--detect", "0.5", "--metric", "actionability_score", "--json")
    assert found.code == 0, found.output
    data = json.loads(found.out)["metrics"][0]
    values = values_by_hand(runs, "actionability_score")
    within = statistics.fmean(statistics.variance(v) for v in values.values())
    between = statistics.variance([statistics.fmean(v) for v in values.values()]) - within / 3
    assert data["variance"]["within"] == pytest.approx(2 * within)  # unpaired: two runs' noise
    assert data["variance"]["between"] == pytest.approx(2 * max(0.0, between))
    for row in data["rows"]:
        r = row["repeats"]
        expected = math.ceil((Z / 0.5) ** 2 * (2 * max(0.0, between) + 2 * within / r))
        assert row["items"] == max(2, expected), r
        assert row["cost_usd"] is None and row["cost_reason"].startswith("unknown")
        assert row["wall_s"] is not None
    assert [row["repeats"] for row in data["rows"]] == [1, 2, 3, 5]
    sd1 = math.sqrt((2 * max(0.0, between) + 2 * within) / 6)
    assert data["detectable"]["1"] == pytest.approx(Z * sd1, rel=1e-5)
    assert data["dataset_items"] == 6


def test_the_plan_reads_well_at_80_columns(planned: None, scoregate: Cli) -> None:
    shown = scoregate("plan", "smoke", "--detect", "0.5", "--metric", "actionability_score")
    assert shown.code == 0, shown.output
    lines = shown.out.splitlines()
    assert lines[0].startswith("plan smoke: detect a difference of 0.5 with power 0.8")
    assert any(line.startswith("  needed        ") and "items × 1 repeat: cost unknown" in line for line in lines)
    assert any(line.startswith("  this dataset  6 items detect") for line in lines)
    assert all(len(line) <= 80 for line in lines), shown.out


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--detect", "0"), "error: --detect 0: the difference to detect must be above 0, e.g. 0.03"),
        (("--detect", "0.1", "--power", "1.5"), "error: --power 1.5: a probability between 0 and 1, e.g. 0.8"),
        (("--detect", "0.1", "--metric", "nope"), "error: --metric nope: no evaluator of smoke writes it"),
    ],
)
def test_bad_input_is_one_clear_line(planned: None, scoregate: Cli, args: tuple[str, ...], line: str) -> None:
    refused = scoregate("plan", "smoke", *args)
    assert refused.code == 2
    assert refused.err.splitlines()[0] == line


def test_an_experiment_never_run_says_how_to_measure_its_variance(project_dir: Path, scoregate: Cli) -> None:
    refused = scoregate("plan", "counters", "--detect", "0.1")
    assert refused.code == 1
    assert "counters has no finished valid run to read its variance from" in refused.output
    assert "`scoregate run counters --limit 30 --repeat 2`" in refused.output


@pytest.mark.parametrize(("detect", "shown"), [("inf", "inf"), ("1e400", "inf"), ("-inf", "-inf")])
def test_an_infinite_difference_to_detect_is_one_clear_line(
    planned: None, scoregate: Cli, detect: str, shown: str
) -> None:
    refused = scoregate("plan", "smoke", "--detect", detect)
    assert refused.code == 2
    assert " ".join(refused.err.split()) == (
        f"error: --detect {shown}: the difference to detect must be a finite number above 0, e.g. 0.03"
    )
