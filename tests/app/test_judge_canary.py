"""The judge drift canary: a calibration set pinned to each judge, re-scored on `calibrate --canary`, and
`promote` refusing while a judge that decides a gate has drifted or changed since its last calibration. The canary
run by the real executable, measuring drift, is in tests/e2e/test_judge_canary_processes.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scoregate.errors import ExitCode
from support.judge_canary import HUMAN, JUDGE, LOST, Cli, Edit, calibrate_baseline, judge_answers
from support.judge_canary import pinned as pinned  # the fixture
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI


def test_a_saved_calibration_records_the_judges_model_prompt_and_rubric_hash_and_its_item_scores(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    judge_answers(scripted_server, HUMAN)
    record = calibrate_baseline(scoregate, runs)
    assert record["model"] == {"name": "scripted", "provider": "openai", "model": "scripted-1"}
    assert re.fullmatch(r"[0-9a-f]{64}", record["prompt_hash"]) and re.fullmatch(r"[0-9a-f]{64}", record["rubric_hash"])
    assert record["prompt_hash"] != record["rubric_hash"]
    assert record["pairs"] == {item: [float(score), float(score)] for item, score in HUMAN.items()}


def test_a_canary_pinned_to_an_unknown_experiment_is_refused_by_name(
    pinned: Path, scoregate: Cli, edit_yaml: Edit
) -> None:
    edit_yaml(pinned / "scoregate.yaml", lambda c: c["canaries"][JUDGE].update(experiment="gold_judge"))
    refused = scoregate("calibrate", "--canary")
    assert refused.code != 0
    assert f"canaries.{JUDGE}.experiment: no experiment 'gold_judge'" in refused.output
    assert "gold_judges" in refused.output  # the suggestion


def test_a_canary_set_without_human_ratings_is_refused_before_any_call(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, edit_yaml: Edit
) -> None:
    edit_yaml(pinned / "scoregate.yaml", lambda c: c["canaries"][JUDGE].update(human_key="human_relevance"))
    refused = scoregate("calibrate", "--canary")
    assert refused.code == ExitCode.ERROR, refused.output
    text = " ".join(refused.output.split())
    assert f"canaries.{JUDGE}.human_key: no item of" in text and "gold_v1.jsonl" in text
    assert "has a human rating 'human_relevance' (metadata.human.relevance)" in text
    assert scripted_server.requests == [] and not (pinned / "runs").exists()
    assert "Traceback" not in refused.output


def test_the_report_shows_the_drift_of_a_runs_judges(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    plain = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert 'id="judge-drift"' not in plain  # no judge of that run had a calibration yet

    judge_answers(scripted_server, LOST)
    assert scoregate("calibrate", "--canary").code == 0
    canary_run = runs.latest()
    drift = runs.summary(canary_run)["judge_drift"][0]["drift"]
    page = (runs.root / canary_run / "report.html").read_text(encoding="utf-8")
    assert '<section id="judge-drift"><h2>Judge drift</h2>' in page
    row = re.search(rf"<tr><td>{JUDGE}</td><td>actionability_score</td>(.*?)</tr>", page)
    assert row is not None, page
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[:5] == ["DRIFTED", "spearman", "1.000", f"{drift['canary']:.3f}", f"{drift['change']['value']:+.3f}"]
    assert cells[5].startswith("[-") and cells[6] == "0.1" and cells[8] == canary_run

    assert scoregate("run", "gold_judges", "--no-mlflow").code == 0  # a later run shows the judge's state too
    later = (runs.root / runs.latest() / "report.html").read_text(encoding="utf-8")
    assert f'<td>{JUDGE}</td><td>actionability_score</td><td class="bad">DRIFTED</td>' in later


def test_a_run_after_the_judge_changed_re_scores_its_set_once(
    pinned: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    assert scoregate("run", "smoke", "--no-mlflow").code == 0  # the judge as calibrated: no canary
    assert len(runs.ids()) == 2

    edit_yaml(pinned / "evaluators" / f"{JUDGE}.yaml", lambda spec: spec.update(prompt=spec["prompt"] + "\nBe strict."))
    judge_answers(scripted_server, LOST)
    after = scoregate("run", "smoke", "--no-mlflow")

    assert after.code == 0, after.output
    text = " ".join(after.output.split())
    assert f"judge {JUDGE} changed since its last calibration or canary: re-scoring its calibration set" in text
    assert len(runs.ids()) == 4  # the run and the canary's run of gold_judges
    canary = json.loads((pinned / "calibrations" / f"{JUDGE}.json").read_text())["scores"]["actionability_score"]
    assert canary["canary"]["drift"]["status"] == "drifted"
    assert f"canary of {JUDGE} ({canary['canary']['run']}): drifted: spearman 1.000 at calibration" in text
    smoke = [r for r in runs.ids() if r.startswith("smoke-")]
    latest_smoke = max(smoke, key=lambda r: runs.manifest(r)["started_at"])
    assert runs.summary(latest_smoke)["judge_drift"][0]["status"] == "drifted"

    assert scoregate("run", "smoke", "--no-mlflow").code == 0  # the canary is newer than the change: none again
    assert len(runs.ids()) == 5
