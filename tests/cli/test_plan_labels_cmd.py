"""`scoregate plan EXPERIMENT --labels N`: which human labels, judged pass or judged fail, to ask for next."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.analysis.label_allocation import JudgedClass, allocate
from support.label_plan_project import HUMAN, label_plan_run
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
ASK = ("--judge-key", "actionability_score", "--human-key", "human_actionability", "--pass-at", "4")


def test_the_plan_names_unlabelled_items_of_each_judged_class(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    ids = label_plan_run(project_dir, scripted_server, scoregate, runs)
    found = scoregate("plan", "smoke", "--labels", "2", *ASK, "--json")
    assert found.code == 0, found.output
    data = json.loads(found.out)
    # judged pass: items 0-2, labelled 0 (5: pass) and 1 (3: fail); judged fail: 3-5, labelled 3 (2) and 4 (4: pass)
    assert data["labelled"] == {"judged pass": 2, "judged fail": 2}
    assert data["corrected"]["value"] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    expected = allocate(JudgedClass(0.5, 2, 1), JudgedClass(0.5, 2, 1), 6, 2)
    assert (data["plan"]["judged_pass"], data["plan"]["judged_fail"]) == (expected.judged_pass, expected.judged_fail)
    labelled = {ids[n] for n in HUMAN}
    assert set(data["chosen"]["judged pass"]) <= set(ids[:3]) - labelled
    assert set(data["chosen"]["judged fail"]) <= set(ids[3:]) - labelled
    assert len(data["chosen"]["judged pass"]) + len(data["chosen"]["judged fail"]) == 2

    shown = scoregate("plan", "smoke", "--labels", "2", *ASK)
    assert shown.code == 0, shown.output
    lines = shown.out.splitlines()
    assert lines[0] == "labels for actionability_score (judge) vs human_actionability (human), run"
    assert any(line.startswith("  corrected     pass rate 0.500 [") for line in lines), shown.out
    assert "--labels 2 --judge-key actionability_score --human-key human_actionability --pass-at 4`" in shown.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--labels", "0", *ASK), "error: --labels 0: plan at least 1 label"),
        (("--labels", "2", "--human-key", "h"), "error: --judge-key is needed with --labels: name the pass/fail score"),
        (
            ("--labels", "2", "--detect", "0.1", *ASK),
            "error: give --detect D (items to detect a difference) or --labels N",
        ),
    ],
)
def test_bad_label_requests_are_one_line(project_dir: Path, scoregate: Cli, args: tuple[str, ...], line: str) -> None:
    refused = scoregate("plan", "smoke", *args)
    assert refused.code == 2
    assert refused.output.startswith(line)


def test_a_numeric_score_without_pass_at_is_refused(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    label_plan_run(project_dir, scripted_server, scoregate, runs)
    refused = scoregate("plan", "smoke", "--labels", "2", *ASK[:4])
    assert refused.code == 2
    assert (
        "error: --judge-key actionability_score: a pass/fail score (0 or 1) is needed, and it has 2" in refused.output
    )


@pytest.mark.parametrize("pass_at", ["nan", "inf", "-inf"])
def test_a_pass_at_that_is_not_a_finite_score_is_one_line(project_dir: Path, scoregate: Cli, pass_at: str) -> None:
    refused = scoregate("plan", "smoke", "--labels", "2", *ASK[:4], "--pass-at", pass_at)
    assert refused.code == 2, refused.output
    assert refused.output.startswith(f"error: --pass-at {pass_at}: a finite score where a pass starts"), refused.output
