"""The judge drift canary through the real executable: `calibrate --canary` measures no drift for the same judge
and a drift beyond tolerance for a lost one."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from support.judge_canary import HUMAN, JUDGE, LOST, Cli, calibrate_baseline, judge_answers
from support.judge_canary import pinned as pinned  # the fixture
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI


def test_the_canary_measures_no_drift_for_the_same_judge_and_a_drift_beyond_tolerance_for_a_lost_one(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs,
    start_scoregate: Callable[..., subprocess.Popen[str]],
) -> None:  # fmt: skip
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    same = scoregate("calibrate", "--canary", "--json")
    assert same.code == 0, same.output
    [result] = json.loads(same.out)
    assert result["drift"]["status"] == "ok" and result["drift"]["change"]["value"] == pytest.approx(0.0)
    assert result["calibration"]["pooled"]["spearman"]["value"] == pytest.approx(1.0)

    judge_answers(scripted_server, LOST)  # same model id, other answers: only an uncached call sees it
    asked = len(scripted_server.judge_requests())
    process = start_scoregate("calibrate", "--canary")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    assert len(scripted_server.judge_requests()) == asked + 6
    lost = json.loads((pinned / "calibrations" / f"{JUDGE}.json").read_text())["scores"]["actionability_score"]
    drift = lost["canary"]["drift"]
    assert drift["status"] == "drifted" and drift["calibrated"] == pytest.approx(1.0)
    assert drift["canary"] < 0 and drift["change"]["value"] == pytest.approx(drift["canary"] - 1.0)
    assert lost["canary"]["run"] == runs.latest() and lost["metrics"]["pooled"]["spearman"]["value"] == 1.0
    text = " ".join(out.split())
    assert f"{JUDGE} (actionability_score vs human_actionability), canary run {runs.latest()}:" in text
    change = f"{drift['canary']:.3f} now: change {drift['change']['value']:+.3f}"
    assert f"drifted: spearman 1.000 at calibration, {change}" in text
    assert "beyond the tolerance of -0.1" in text
