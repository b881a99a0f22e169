"""The drift canary names the judge version its figure belongs to: the definition `judges apply` marks the judge's
Langfuse evaluator with, so the figure can be matched to the deployed evaluator that holds it."""

from __future__ import annotations

import json
from pathlib import Path

from scoregate.integrations.langfuse.evaluators_sync import wanted_body
from scoregate.tracks.project import load_project
from support.judge_canary import HUMAN, JUDGE, Cli, calibrate_baseline, judge_answers
from support.judge_canary import pinned as pinned  # the fixture
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI


def test_the_canary_names_the_langfuse_definition_of_the_judge_it_measured(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)

    as_json = scoregate("calibrate", "--canary", "--json")
    shown = scoregate("calibrate", "--canary")

    body = wanted_body(load_project(pinned), load_project(pinned).evaluators[JUDGE])
    definition = getattr(body, "definition_hash", None)
    assert definition is not None
    [result] = json.loads(as_json.out)
    assert result["langfuse_definition"] == definition
    saved = json.loads((pinned / "calibrations" / f"{JUDGE}.json").read_text())["scores"]["actionability_score"]
    assert saved["canary"]["langfuse_definition"] == definition
    flat = " ".join(shown.output.split())
    assert f"judge version: the Langfuse evaluator marked `{JUDGE} definition {definition}`" in flat


def test_the_reports_drift_row_carries_the_definition_and_shows_it(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    from scoregate.app.run.judge_gates import judge_calibration_rows
    from scoregate.report.gate_extras import judge_drift_section

    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    assert scoregate("calibrate", "--canary").code == 0
    project = load_project(pinned)

    (row,) = judge_calibration_rows(project, [JUDGE], "scripted")
    html = judge_drift_section({"runs": [{"run_id": "r1", "judge_drift": [row]}]})

    body = wanted_body(project, project.evaluators[JUDGE])
    definition = getattr(body, "definition_hash", None)
    assert row["langfuse_definition"] == definition and definition is not None
    assert f"<td>{definition}</td>" in html and "Langfuse definition" in html
