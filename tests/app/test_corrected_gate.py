"""Corrected judge metrics in a run: the corrected mean beside the raw one, and gates that ask for it — failed on a
lenient judge the raw mean would pass, INCOMPLETE with the reason where no calibration set binds, never passed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.corrected_estimators import ppi_mean
from support.judge_canary import HUMAN, JUDGE, Cli, Edit, calibrate_baseline, judge_answers
from support.judge_canary import pinned as pinned  # the fixture
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI

KEY = "actionability_score"
LENIENT_PAIRS = {
    f"cal-{i:02d}": [float(min(5, h + 1)), float(h)] for i, h in enumerate([1, 2, 3, 4, 2, 3, 3, 4, 1, 2, 3, 2])
}
"""A calibration set of 12 items on which the judge scored one point above the human (at most 5)."""


def _gate(edit_yaml: Edit, project: Path, **fields: Any) -> None:
    """Give gold_judges one gate: actionability_score mean >= 4.0, with `fields`."""

    def change(config: dict[str, Any]) -> None:
        config["gates"].append({"name": "act", "metric": KEY, "op": ">=", "threshold": 4.0, **fields})
        config["experiments"]["gold_judges"]["gates"] = ["act"]

    edit_yaml(project / "scoregate.yaml", change)


def _set_pairs(project: Path, pairs: dict[str, list[float]]) -> None:
    path = project / "calibrations" / f"{JUDGE}.json"
    data = json.loads(path.read_text())
    data["scores"][KEY]["pairs"] = pairs
    path.write_text(json.dumps(data))


def _act(runs: Runs) -> dict[str, Any]:
    return dict(next(g for g in runs.summary()["gates"] if g["name"] == "act"))


def test_a_lenient_judge_passes_on_the_raw_mean_and_fails_on_the_corrected_one(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)  # the run's judge scores: 5 4 4 5 3 5, raw mean 4.33
    calibrate_baseline(scoregate, runs)
    _set_pairs(pinned, LENIENT_PAIRS)
    _gate(edit_yaml, pinned, estimate="corrected")

    result = scoregate("run", "gold_judges", "--no-mlflow", "--fail-on-gates")

    stats = runs.summary()["scores"][KEY]
    expected = ppi_mean(list(map(float, HUMAN.values())), *zip(*LENIENT_PAIRS.values(), strict=True))
    assert stats["mean"] == pytest.approx(26 / 6)
    assert stats["corrected"]["method"] == "ppi++"
    assert stats["corrected"]["value"] == pytest.approx(expected.value)
    assert stats["corrected"]["ci_high"] == pytest.approx(expected.ci_high)
    assert stats["corrected"]["value"] < 4.0 < stats["mean"]
    gate = _act(runs)
    assert gate["status"] == "fail" and gate["estimate"] == "corrected"
    assert gate["observed"] == pytest.approx(expected.value)
    assert f"corrected mean = {expected.value:.4g} (PPI++, 12 labels; raw mean 4.333)" in gate["detail"]
    assert result.code == 3
    text = " ".join(result.output.split())
    assert f"corrected {expected.value:.3f}" in text  # the terminal shows it beside the raw mean
    html = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert f"corrected {expected.value:.3g} [{expected.ci_low:.3g}, {expected.ci_high:.3g}] (PPI++, 12 labels)" in html


def test_too_few_labels_leave_the_gate_incomplete_with_the_reason_though_the_raw_mean_passes(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)  # the 6 gold items: fewer than PPI++'s 10
    _gate(edit_yaml, pinned)
    edit_yaml(pinned / "scoregate.yaml", lambda c: c["settings"].update(gate_estimate="corrected"))

    result = scoregate("run", "gold_judges", "--no-mlflow", "--fail-on-gates")

    gate = _act(runs)
    assert gate["status"] == "incomplete" and gate["observed"] is None
    assert gate["detail"] == (
        "corrected mean of actionability_score cannot be computed: 6 calibration pairs of judge and human: PPI++ "
        "needs at least 10; raw mean 4.333 not gated"
    )
    assert runs.summary()["scores"][KEY]["corrected"]["reason"].startswith("6 calibration pairs")
    html = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert "corrected: null (6 calibration pairs of judge and human: PPI++ needs at least 10)" in html
    assert result.code == 3


def test_a_calibration_bound_to_another_judge_version_leaves_the_gate_incomplete(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    _set_pairs(pinned, LENIENT_PAIRS)
    _gate(edit_yaml, pinned, estimate="corrected")
    evaluator = pinned / "evaluators" / f"{JUDGE}.yaml"
    evaluator.write_text(evaluator.read_text().replace("version: 1\n", "version: 2\n", 1))

    result = scoregate("run", "gold_judges", "--no-mlflow", "--fail-on-gates", "--json")

    gate = _act(runs)
    assert gate["status"] == "incomplete"
    assert "is bound to another judge: version 2 is not the calibrated version 1" in gate["detail"]
    assert result.code == 3
    corrected = json.loads(result.out)["summary"]["scores"][KEY]["corrected"]  # --json carries it, null and why
    assert corrected["value"] is None and "version 2 is not the calibrated version 1" in corrected["reason"]


def test_a_judge_never_calibrated_gets_no_corrected_figure_and_a_gate_asking_for_one_is_incomplete(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0
    assert "corrected" not in runs.summary()["scores"][KEY]
    _gate(edit_yaml, pinned, estimate="corrected")

    assert scoregate("run", "gold_judges", "--no-mlflow", "--fail-on-gates").code == 3

    gate = _act(runs)
    assert gate["status"] == "incomplete"
    assert f"judge {JUDGE} has no saved calibration of {KEY}" in gate["detail"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"stat": "every_item"}, "use `stat:` mean, ci_low or ci_high, not every_item"),
        ({"stat": "median"}, "use `stat:` mean, ci_low or ci_high, not median"),
    ],
)
def test_a_corrected_gate_on_a_stat_it_cannot_give_is_refused_by_name(
    pinned: Path, scoregate: Cli, edit_yaml: Edit, fields: dict[str, Any], message: str
) -> None:
    _gate(edit_yaml, pinned, estimate="corrected", **fields)
    refused = scoregate("validate")
    assert refused.code != 0
    assert message in " ".join(refused.output.split())
    assert "Traceback" not in refused.output


def test_a_corrected_regression_gate_on_a_1_to_5_judge_is_incomplete_and_says_it_needs_pass_fail_scores(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)  # the first gold_judges run: the production baseline below
    _set_pairs(pinned, LENIENT_PAIRS)
    baseline = runs.latest()
    versions = runs.manifest(baseline)["receipts"]["prompts"]
    moves = [{"prompt": name, "label": "production", "action": "promote", "version": p["version"], "time": "2026-01-01"}
             for name, p in versions.items()]  # fmt: skip
    (pinned / "promotions.jsonl").write_text("".join(json.dumps(move) + "\n" for move in moves))
    _gate(edit_yaml, pinned, stat="paired_noninferiority", compare_to="production", margin=0.2, threshold=0,
          op=">=", estimate="corrected")  # fmt: skip

    result = scoregate("run", "gold_judges", "--no-mlflow", "--fail-on-gates")

    gate = _act(runs)
    assert gate["status"] == "incomplete" and gate["estimate"] == "corrected"
    assert gate["detail"].startswith(f"vs production run {baseline} (")
    assert (
        "the corrected paired difference cannot be computed: a corrected paired difference needs pass/fail"
        in (gate["detail"])
    )
    assert result.code == 3


def test_stop_early_refuses_a_corrected_deciding_gate_on_a_1_to_5_score_before_any_call(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0
    reference = runs.latest()
    _gate(edit_yaml, pinned, estimate="corrected")
    asked = len(scripted_server.judge_requests())

    refused = scoregate("run", "gold_judges", "--no-mlflow", "--stop-early", "--against", reference)

    assert refused.code != 0
    text = " ".join(refused.output.split())
    assert "--stop-early: gate act asks for the corrected estimate" in text
    assert "actionability_score is not a pass/fail score: a corrected stop needs one" in text
    assert "Traceback" not in refused.output
    assert len(scripted_server.judge_requests()) == asked and runs.ids() == [reference]


def test_a_text_score_gets_no_corrected_mean_even_beside_a_calibration_record(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    path = pinned / "calibrations" / f"{JUDGE}.json"
    data = json.loads(path.read_text())
    data["scores"]["actionability_notes"] = {**data["scores"][KEY], "pairs": LENIENT_PAIRS}  # a stray record
    path.write_text(json.dumps(data))

    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0

    notes = runs.summary()["scores"]["actionability_notes"]
    assert notes["data_type"] == "text" and "corrected" not in notes  # its column only marks measured items


def test_after_a_judge_change_its_canary_re_scored_set_becomes_the_calibration_set(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    _gate(edit_yaml, pinned, estimate="corrected")
    edit_yaml(pinned / "evaluators" / f"{JUDGE}.yaml", lambda spec: spec.update(prompt=spec["prompt"] + "\nBe strict."))

    changed = scoregate("run", "gold_judges", "--no-mlflow")  # the judge changed: its canary re-scores the set after
    first = [r for r in runs.ids() if r != runs.latest()]
    assert changed.code == 0, changed.output
    reasons = [runs.summary(r)["scores"][KEY].get("corrected", {}).get("reason") or "" for r in first]
    assert any("is bound to another judge: its prompt, rubric or settings changed" in r for r in reasons)

    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0

    corrected = runs.summary()["scores"][KEY]["corrected"]
    assert corrected["reason"] == "6 calibration pairs of judge and human: PPI++ needs at least 10"
    record = json.loads((pinned / "calibrations" / f"{JUDGE}.json").read_text())["scores"][KEY]
    assert record["canary"]["pairs"] == {item: [float(score), float(score)] for item, score in HUMAN.items()}
