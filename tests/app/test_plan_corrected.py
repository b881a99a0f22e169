"""`scoregate plan` on a judge score with a bound calibration set plans the corrected estimate: its item variance
scaled as the correction scales it, plus the calibration labels' part that more items never shrink."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from scoregate.analysis.corrected_estimators import ppi_mean
from scoregate.analysis.power import z
from support.judge_canary import HUMAN, JUDGE, Cli, Edit, calibrate_baseline, judge_answers
from support.judge_canary import pinned as pinned  # the fixture
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI

KEY = "actionability_score"
PAIRS = {f"cal-{i:02d}": [float(min(5, h + 1)), float(h)] for i, h in enumerate([1, 2, 3, 4, 2, 3, 3, 4, 1, 2, 3, 2])}
"""12 calibration pairs on which the judge scored one point above the human (at most 5)."""
K = z(0.975) + z(0.8)


def _set_pairs(project: Path) -> None:
    path = project / "calibrations" / f"{JUDGE}.json"
    data = json.loads(path.read_text())
    data["scores"][KEY]["pairs"] = PAIRS
    path.write_text(json.dumps(data))


def test_the_plan_of_a_ppi_corrected_score_adds_the_labels_part_and_scales_the_items_by_lambda(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    judge_answers(scripted_server, HUMAN)  # the run's judge scores: 5 4 4 5 3 5
    calibrate_baseline(scoregate, runs)
    _set_pairs(pinned)
    assert scoregate("run", "gold_judges", "--no-mlflow", "--no-report").code == 0

    shown = scoregate("plan", "gold_judges", "--detect", "0.5", "--metric", KEY, "--json")
    assert shown.code == 0, shown.output
    (metric,) = json.loads(shown.out)["metrics"]
    run = [float(v) for v in HUMAN.values()]
    expected = ppi_mean(run, *zip(*PAIRS.values(), strict=True))
    lam, se = expected.details["lambda"], expected.details["se"]
    assert lam is not None and se is not None
    fixed = se**2 - lam**2 * statistics.variance(run) / 6  # the rectifier: (labels' residual variance) / 12
    variance = metric["variance"]
    assert variance["fixed"] == pytest.approx(fixed)
    assert variance["between"] == pytest.approx(lam**2 * statistics.variance(run))  # one run, not a difference
    assert metric["paired_with"] is None
    # the dataset's 6 items detect K·√(λ²·s²/6 + fixed) = K·se: the corrected interval's own width
    assert metric["detectable"]["1"] == pytest.approx(K * se)
    notes = " ".join(metric["notes"])
    assert "corrected (PPI++, 12 labels" in notes
    assert "past a point only more human labels shrink it" in notes
    floor = K * math.sqrt(fixed)
    assert f"no number of items detects less than {floor:.3g}" in notes

    assert metric["one_run"] is True
    said = " ".join(scoregate("plan", "gold_judges", "--detect", "0.5", "--metric", KEY).out.split())
    assert "past a point only more human labels shrink it" in said
    assert f"a per-item value varies by sd {(lam**2 * statistics.variance(run)) ** 0.5:.3g}" in said


def test_a_calibration_that_no_longer_binds_is_said_and_the_plan_stays_raw(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    _set_pairs(pinned)
    assert scoregate("run", "gold_judges", "--no-mlflow", "--no-report").code == 0
    edit_yaml(pinned / "evaluators" / f"{JUDGE}.yaml", lambda judge: judge.update(version=judge["version"] + 1))

    (metric,) = json.loads(scoregate("plan", "gold_judges", "--detect", "0.5", "--metric", KEY, "--json").out)[
        "metrics"
    ]
    assert metric["variance"]["fixed"] == 0.0
    assert any(n.startswith("corrected estimate not planned: ") for n in metric["notes"]), metric["notes"]


def test_a_pass_fail_correction_scales_the_items_by_one_over_j_squared_and_adds_the_youden_part() -> None:
    from scoregate.analysis.power import Variance, detectable, items_needed
    from scoregate.app.plan_corrected import pass_fail_variance
    from scoregate.store.sections import CorrectedStats

    # specificity 0.6 on 20 human fails, sensitivity 0.95 on 20 human passes: J = 0.55
    block = CorrectedStats(
        method="sensitivity-specificity", method_name="sensitivity/specificity", value=0.4, ci_low=0.2, ci_high=0.6,
        n_run=60, n_labels=40, details={"p": 0.5, "q0": 0.6, "q1": 0.95, "m0": 20, "m1": 20, "se": 0.1},
    )  # fmt: skip
    raw = Variance(between=0.2, within=None, items=60, source="paired with production run p1 (repeat 1)")
    corrected, one_run, notes = pass_fail_variance(block, raw)
    assert not one_run
    assert corrected.between == pytest.approx(0.2 / 0.55**2)
    relative = (0.6 * 0.4 / 20 + 0.95 * 0.05 / 20) / 0.55**2
    assert corrected.relative == pytest.approx(relative)
    # 60 items detect Δ with K·√(0.2/J²/60 + relative·Δ²) = Δ
    assert detectable(corrected, 60, 1, power=0.8) == pytest.approx(
        K * math.sqrt(0.2 / 0.55**2 / 60) / math.sqrt(1 - K**2 * relative)
    )
    assert items_needed(corrected, 0.3, 1, power=0.8).items == math.ceil(
        (0.2 / 0.55**2) / (0.09 / K**2 - relative * 0.09)
    )
    assert notes[0].startswith("corrected (sensitivity/specificity, 40 labels, Youden J 0.55)")
    assert notes[0].endswith("past a point only more human labels shrink it, not more items")
