"""`scoregate compare --estimate corrected`: the corrected paired difference of a pass/fail judge's pass rates beside
the raw one (terminal, `--json`, report, MLflow), null with the reason where no calibration set can correct it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.corrected_difference import corrected_difference
from scoregate.app.calibration_runs import evaluator_fingerprint
from scoregate.sinks.mlflow.compare import comparison_metrics
from scoregate.tracks.project import load_project
from support.compare_runs import write_run
from support.judge_canary import Cli, Edit
from support.projects import Runs

JUDGE = "ev_format_adherence_v1"
KEY = "format_adherence"
NUMERIC = "ev_actionability_v1"
N = 60
A_PASS = set(range(0, 48))
"""Items the judge passed in run A (48 of 60: judged 0.8)."""
B_PASS = set(range(0, 40))
"""Items the judge passed in run B (40 of 60: judged 0.667)."""
FAILS = [0] * 12 + [1] * 8
"""The judge on 20 items humans failed: specificity 12/20 = 0.6 (a lenient judge)."""
PASSES = [1] * 19 + [0]
"""The judge on 20 items humans passed: sensitivity 19/20 = 0.95."""


def _receipts(project: Path) -> dict[str, Any]:
    def used(judge: str) -> dict[str, Any]:
        file_hash = hashlib.sha256((project / "evaluators" / f"{judge}.yaml").read_bytes()).hexdigest()
        return {"kind": "llm_judge", "version": 1, "file_hash": file_hash}

    return {
        "evaluators": {JUDGE: used(JUDGE), NUMERIC: used(NUMERIC)},
        "judge_model": {"name": "scripted", "provider": "openai", "model": "scripted-1", "endpoint": "http://x",
                        "temperature": None, "max_tokens": None},
    }  # fmt: skip


def _runs(project: Path) -> None:
    """Runs A and B of 60 items: the judge's pass/fail verdict, a 1-5 judge score and a counter."""
    evaluators = {KEY: JUDGE, "actionability_score": NUMERIC, "word_count": "counters_v1"}
    for run_id, passed in (("run-a", A_PASS), ("run-b", B_PASS)):
        scores = {
            f"item-{i:02d}": {KEY: i in passed, "actionability_score": 3 + (i % 3) - (run_id == "run-b") * (i % 2),
                              "word_count": 100 + i}
            for i in range(N)
        }  # fmt: skip
        write_run(project / "runs", run_id, scores, score_evaluators=evaluators, **_receipts(project))


def _save(project: Path, judge: str, key: str, pairs: dict[str, list[float]]) -> None:
    spec = load_project(project).evaluators[judge]
    record = {"version": 1, "fingerprint": evaluator_fingerprint(spec),
              "model": {"name": "scripted", "provider": "openai", "model": "scripted-1"},
              "human_key": "human", "calibrated_at": "2026-11-29T12:00:00+00:00", "pairs": pairs}  # fmt: skip
    (project / "calibrations").mkdir(exist_ok=True)
    (project / "calibrations" / f"{judge}.json").write_text(json.dumps({"evaluator": judge, "scores": {key: record}}))


def _calibrate(project: Path, *, fails: list[int] = FAILS, passes: list[int] = PASSES) -> None:
    """Save the pass/fail judge's calibration set, and a 1-5 one of 12 items for the actionability judge."""
    pairs = {f"cal-{i:02d}": [float(j), 0.0] for i, j in enumerate(fails)}
    pairs |= {f"cal-{len(fails) + i:02d}": [float(j), 1.0] for i, j in enumerate(passes)}
    _save(project, JUDGE, KEY, pairs)
    _save(
        project,
        NUMERIC,
        "actionability_score",
        {f"cal-{i:02d}": [float(min(5, h + 1)), float(h)] for i, h in enumerate([1, 2, 3, 4, 2, 3, 3, 4, 1, 2, 3, 2])},
    )


def _compare_json(scoregate: Cli, *args: str) -> dict[str, Any]:
    result = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--json", *args)
    assert result.code == 0, result.output
    return dict(json.loads(result.out))


def test_the_corrected_difference_of_pass_rates_stands_beside_the_raw_one(
    project_dir: Path, scoregate: Cli, runs: Runs
) -> None:
    _runs(project_dir)
    _calibrate(project_dir)

    data = _compare_json(scoregate, "--estimate", "corrected")

    score = data["scores"][KEY]
    corrected = score["corrected"]
    judged = len(B_PASS) / N - len(A_PASS) / N  # -0.133
    assert score["diff"] == pytest.approx(judged)
    assert corrected["value"] == pytest.approx(judged / (0.6 + 0.95 - 1))  # Δθ = Δp/(q0 + q1 − 1) = -0.242
    expected = corrected_difference(
        [float(i in B_PASS) for i in range(N)], [float(i in A_PASS) for i in range(N)],
        [float(j) for j in FAILS + PASSES], [0.0] * 20 + [1.0] * 20, confidence=score["ci_level"],
    )  # fmt: skip
    assert (corrected["ci_low"], corrected["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))
    assert corrected["confidence"] == score["ci_level"]  # the same level as the raw interval beside it
    assert corrected["n_labels"] == 40 and corrected["verdict"] == "worse"
    assert data["estimate"] == "corrected"
    text = " ".join(scoregate("compare", "run-a", "run-b", "--no-mlflow", "--estimate", "corrected").output.split())
    assert f"{KEY}: raw Δ -0.133" in text
    assert f"corrected Δ {corrected['value']:+.3f} [{expected.ci_low:+.3f}, {expected.ci_high:+.3f}]" in text
    html = (runs.root / "run-b" / "compare-run-a.html").read_text(encoding="utf-8")
    assert f"corrected Δ {corrected['value']:+.3g}" in html
    metrics = comparison_metrics(data)  # what the MLflow comparison run gets
    assert metrics[f"{KEY}_corrected_diff"] == pytest.approx(corrected["value"])
    assert metrics[f"{KEY}_corrected_diff_ci_low"] == pytest.approx(expected.ci_low)


def test_a_1_to_5_judge_score_gets_null_with_the_reason_and_a_counter_gets_none(
    project_dir: Path, scoregate: Cli
) -> None:
    _runs(project_dir)
    _calibrate(project_dir)

    scores = _compare_json(scoregate, "--estimate", "corrected")["scores"]

    actionability = scores["actionability_score"]["corrected"]
    assert actionability["value"] is None
    assert actionability["reason"] == (
        "a corrected paired difference needs pass/fail scores: for other scores PPI++ would need human labels of "
        "both runs' outputs"
    )
    assert "corrected" not in scores["word_count"]  # not a judge score: nothing to correct
    (project_dir / "calibrations" / f"{NUMERIC}.json").unlink()  # never calibrated: the same reason, not "calibrate"
    again = _compare_json(scoregate, "--estimate", "corrected")["scores"]["actionability_score"]["corrected"]
    assert again["reason"] == actionability["reason"]


def test_the_project_setting_asks_for_it_and_a_judge_no_better_than_chance_is_null_with_why(
    project_dir: Path, scoregate: Cli, edit_yaml: Edit
) -> None:
    _runs(project_dir)
    _calibrate(project_dir, fails=[0] * 8 + [1] * 12, passes=[1] * 10 + [0] * 10)  # q0 0.4 + q1 0.5 ≤ 1
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["settings"].update(gate_estimate="corrected"))

    data = _compare_json(scoregate)

    corrected = data["scores"][KEY]["corrected"]
    assert corrected["value"] is None and corrected["verdict"] == "cannot compare"
    assert corrected["reason"] == (
        "the judge is no better than chance on its calibration set: specificity 0.400 + sensitivity 0.500 ≤ 1"
    )
    assert "corrected" not in _compare_json(scoregate, "--estimate", "raw")["scores"][KEY]


def test_a_run_scored_by_another_version_of_the_judge_is_not_corrected(project_dir: Path, scoregate: Cli) -> None:
    _runs(project_dir)
    _calibrate(project_dir)
    judge_file = project_dir / "evaluators" / f"{JUDGE}.yaml"
    judge_file.write_text(judge_file.read_text().replace("version: 1\n", "version: 2\n", 1))

    corrected = _compare_json(scoregate, "--estimate", "corrected")["scores"][KEY]["corrected"]

    assert corrected["value"] is None
    assert f"evaluators/{JUDGE}.yaml changed since run run-a was scored" in corrected["reason"]


def test_an_unknown_estimate_is_one_clear_line(project_dir: Path, scoregate: Cli) -> None:
    _runs(project_dir)

    refused = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--estimate", "fixed")

    assert refused.code == 2
    assert "--estimate fixed" in " ".join(refused.output.split()) and "Traceback" not in refused.output


def test_the_mlflow_comparison_run_gets_the_corrected_difference_and_its_verdict(
    project_dir: Path, scoregate: Cli, mlflow_store: str
) -> None:
    from mlflow.tracking import MlflowClient

    _runs(project_dir)
    _calibrate(project_dir)

    result = scoregate("compare", "run-a", "run-b", "--json", "--estimate", "corrected")

    assert result.code == 0, result.output
    data = json.loads(result.out)
    run = MlflowClient(tracking_uri=mlflow_store).get_run(data["mlflow_run_id"])
    corrected = data["scores"][KEY]["corrected"]
    assert run.data.metrics[f"{KEY}_corrected_diff"] == pytest.approx(corrected["value"])
    assert run.data.metrics[f"{KEY}_corrected_diff_ci_high"] == pytest.approx(corrected["ci_high"])
    assert run.data.tags[f"corrected_verdict.{KEY}"] == "worse"
    assert run.data.tags["corrected_verdict.actionability_score"].startswith(
        "null: a corrected paired difference needs pass/fail scores"
    )
    assert str(run.data.metrics["actionability_score_corrected_diff"]) == "nan"


def test_ranking_refuses_the_corrected_estimate_in_one_line(project_dir: Path, scoregate: Cli) -> None:
    _runs(project_dir)

    refused = scoregate("compare", "run-a", "run-b", "--rank", "--no-mlflow", "--estimate", "corrected")

    assert refused.code == 2 and "Traceback" not in refused.output
    assert "--estimate corrected compares two runs" in " ".join(refused.output.split())
