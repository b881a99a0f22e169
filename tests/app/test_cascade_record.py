"""A cascade judge's figures go into the run record (summary.json `cascade`) and the HTML report: the guaranteed
level, the share its first judge kept and the cost saved, each null with its reason when it cannot be computed."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.run.cascade_report import NOTHING_KEPT
from support.cascade_project import JUDGE, SURE, UNSURE, make_cascade_project
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
Edit = Callable[[Path, Callable[[Any], None]], None]


@pytest.fixture
def cascade_project(
    project_dir: Path, edit_yaml: Edit, scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The test project with 40 labelled items, a `cheap` first judge and the actionability judge as a cascade."""
    return make_cascade_project(project_dir, edit_yaml, scripted_server, monkeypatch)


def _report(runs: Runs) -> str:
    return html.unescape((runs.root / runs.latest() / "report.html").read_text(encoding="utf-8"))


def test_a_calibrated_run_records_the_guarantee_the_share_kept_and_the_cost_saved(
    cascade_project: Path, scoregate: Cli, runs: Runs
) -> None:
    first = scoregate("run", "labelled", "--no-mlflow", "--no-cache")
    assert first.code == 0, first.output
    uncalibrated = runs.summary()["cascade"][JUDGE]
    assert uncalibrated["threshold"] is None and uncalibrated["guaranteed_level"] is None
    assert uncalibrated["share_kept"] is None and uncalibrated["cost_saved_usd"] is None
    assert uncalibrated["reason"].startswith("no cascade calibration (run the judge over human-labelled items")
    assert (
        uncalibrated["cost_reason"]
        == NOTHING_KEPT
        == ("without a threshold nothing is kept: the first judge's calls only calibrate it")
    )
    assert (uncalibrated["items"], uncalibrated["kept"], uncalibrated["escalated"]) == (SURE + UNSURE, 0, SURE + UNSURE)
    assert "cascade ev_actionability_v1: null: no cascade calibration" in _report(runs)
    said = " ".join(first.output.split())
    assert "cascade ev_actionability_v1: the strong judge scored all 40 items: no cascade calibration (run" in said

    assert scoregate("cascade", JUDGE, "--run", runs.latest(), "--save").code == 0
    second = scoregate("run", "labelled", "--no-mlflow", "--no-cache")
    assert second.code == 0, second.output
    block = runs.summary()["cascade"][JUDGE]
    assert (block["threshold"], block["guaranteed_level"], block["delta"]) == (1.0, 0.8, 0.1)
    assert (block["items"], block["kept"], block["escalated"], block["share_kept"]) == (40, SURE, UNSURE, 0.75)
    assert block["calibration_labels"] == 40 and block["reason"] is None
    # from the run's telemetry: the strong judge's cost per escalated item × the items kept, less the first judge's
    per_item = block["strong_cost_usd"] / UNSURE
    assert block["cost_saved_usd"] == pytest.approx(per_item * SURE - block["first_cost_usd"])
    assert block["cost_saved_share"] == pytest.approx(block["cost_saved_usd"] / (per_item * 40))
    page = _report(runs)
    assert "the first judge cheap kept 30 of 40 items (75%, confidence >= 1)" in page
    assert "guaranteed agreement >= 0.8 with probability 0.9 (40 labels)" in page
    assert f"cost saved ${block['cost_saved_usd']:.4f}" in page
    # the printed line and the record agree
    assert "the first judge cheap kept 30 of 40 items (75%" in second.output


def test_a_run_whose_first_judge_kept_every_item_prices_the_strong_judge_from_the_calibration(
    cascade_project: Path, scoregate: Cli, runs: Runs
) -> None:
    import json

    assert scoregate("run", "labelled", "--no-mlflow", "--no-cache").code == 0
    assert scoregate("cascade", JUDGE, "--run", runs.latest(), "--save").code == 0
    saved = json.loads((cascade_project / "calibrations" / f"{JUDGE}.cascade.json").read_text())
    per_item = saved["strong_cost_per_item"]
    assert per_item > 0

    assert scoregate("run", "labelled", "--limit", str(SURE), "--no-mlflow", "--no-cache").code == 0  # all sure
    block = runs.summary()["cascade"][JUDGE]
    assert (block["kept"], block["escalated"], block["strong_cost_usd"]) == (SURE, 0, 0.0)
    assert block["cost_saved_usd"] == pytest.approx(per_item * SURE - block["first_cost_usd"])
    assert block["cost_saved_share"] == pytest.approx(block["cost_saved_usd"] / (per_item * SURE))
    assert block["cost_reason"] is None
    page = _report(runs)
    assert f"cost saved ${block['cost_saved_usd']:.4f}" in page
    assert "of the strong judge alone, the strong judge priced as on its calibration)" in page
    assert block["cost_basis"] == (
        "no item of this run went to the strong judge: its cost per item is the calibration's "
        f"(${per_item:.6f}, runs {saved['runs'][0]})"
    )
