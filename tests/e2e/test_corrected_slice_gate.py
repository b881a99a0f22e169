"""A slice gate on the corrected paired difference, end to end through the CLI: a pass/fail judge with a calibration
set bound to it, a production baseline found by its label, and a candidate that breaks one slice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.corrected_difference import corrected_difference
from scoregate.app.calibration_runs import evaluator_fingerprint
from scoregate.tracks.project import load_project
from support.judge_canary import Cli, Edit
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema
from support.stop_early_runs import NO_SECTIONS, _grow_dataset

JUDGE = "ev_format_adherence_v1"
KEY = "format_adherence"
FAILS = [0] * 18 + [1] * 2
"""The judge on 20 items humans failed: specificity 0.9."""
PASSES = [1] * 19 + [0]
"""The judge on 20 items humans passed: sensitivity 0.95."""


def _serve(server: ScriptedOpenAI, *, break_howto: bool) -> None:
    """Summaries with every section (how-to ones without any when `break_howto`); the judge passes a summary with
    sections and fails one without."""

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if schema is None:
            return NO_SECTIONS if break_howto and "Step-by-step" in text else markdown_summary(body)
        answer = json_for_schema(schema)
        passed = NO_SECTIONS not in text
        answer[KEY] = passed if schema["properties"][KEY].get("type") == "boolean" else int(passed)
        return json.dumps(answer)

    server.responder = reply


def _project(project: Path, edit_yaml: Edit) -> None:
    _grow_dataset(project)

    def change(config: dict[str, Any]) -> None:
        config["gates"].append({
            "name": "fmt_slices", "metric": KEY, "stat": "paired_noninferiority", "compare_to": "production",
            "margin": 0.9, "op": ">=", "threshold": 0, "estimate": "corrected", "slices": ["desired_style"],
            "min_slice_items": 10,
        })  # fmt: skip
        config["experiments"]["fmt_judge"] = {
            "dataset": "smoke_v1", "prompt": config["experiments"]["smoke"]["prompt"], "evaluators": [JUDGE],
            "gates": ["fmt_slices"],
        }  # fmt: skip

    edit_yaml(project / "scoregate.yaml", change)
    pairs = {f"cal-{i:02d}": [float(j), 0.0] for i, j in enumerate(FAILS)}
    pairs |= {f"cal-{20 + i:02d}": [float(j), 1.0] for i, j in enumerate(PASSES)}
    record = {"version": 1, "fingerprint": evaluator_fingerprint(load_project(project).evaluators[JUDGE]),
              "model": {"name": "scripted", "provider": "openai", "model": "scripted-1"}, "human_key": "human",
              "calibrated_at": "2026-11-29T12:00:00+00:00", "pairs": pairs}  # fmt: skip
    (project / "calibrations").mkdir(exist_ok=True)
    (project / "calibrations" / f"{JUDGE}.json").write_text(json.dumps({"evaluator": JUDGE, "scores": {KEY: record}}))


def _promote(project: Path, runs: Runs, run_id: str) -> None:
    versions = runs.manifest(run_id)["receipts"]["prompts"]
    moves = [{"prompt": name, "label": "production", "action": "promote", "version": p["version"], "time": "2026-01-01"}
             for name, p in versions.items()]  # fmt: skip
    (project / "promotions.jsonl").write_text("".join(json.dumps(move) + "\n" for move in moves))


def test_a_candidate_that_breaks_one_slice_fails_the_corrected_slice_gate_though_the_whole_run_holds(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    _project(project_dir, edit_yaml)
    _serve(scripted_server, break_howto=False)
    assert scoregate("run", "fmt_judge", "--no-cache", "--no-mlflow", "--no-report").code == 0
    baseline = runs.latest()
    _promote(project_dir, runs, baseline)
    _serve(scripted_server, break_howto=True)

    done = scoregate("run", "fmt_judge", "--no-cache", "--no-mlflow", "--no-report", "--fail-on-gates", "--json")

    assert done.code == 3, done.output
    gate = next(g for g in runs.summary()["gates"] if g["name"] == "fmt_slices")
    assert gate["status"] == "fail" and gate["estimate"] == "corrected"
    assert gate["detail"].startswith(f"vs production run {baseline} (")
    assert "non-inferior within the margin 0.9" in gate["detail"]  # the whole run holds
    rows = {row["value"]: row for row in gate["slices"]}
    assert {value: row["status"] for value, row in rows.items()} == {"catchup": "pass", "howto": "fail"}
    base = {r["item_id"]: r for r in runs.results(baseline)}
    howto = [r for r in runs.results(runs.latest()) if r["input"].get("desired_style") == "howto"]
    value = lambda r: next(float(s["value"]) for s in r["scores"] if s["name"] == KEY)  # noqa: E731
    expected = corrected_difference(
        [value(r) for r in howto], [value(base[r["item_id"]]) for r in howto], [float(j) for j in FAILS + PASSES],
        [0.0] * 20 + [1.0] * 20, confidence=rows["howto"]["ci_level"],
    )  # fmt: skip
    assert rows["howto"]["n"] == 30 and rows["howto"]["diff"] == -1.0  # every how-to summary lost its sections
    assert rows["howto"]["diff"] == pytest.approx(expected.value)
    assert rows["howto"]["ci_high"] == pytest.approx(expected.ci_high) and expected.ci_high is not None
    assert expected.ci_high < -0.9  # worse than the margin at its Holm level
    assert "Traceback" not in done.output
    printed = json.loads(done.out)["summary"]["gates"][0]
    assert printed["slices"] == gate["slices"] and printed["status"] == "fail"
