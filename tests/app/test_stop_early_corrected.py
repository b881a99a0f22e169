"""`run --stop-early` on a gate that asks for the corrected estimate: the run's confidence sequence at α/2, divided by
the calibration set's Clopper–Pearson interval of the judge's Youden index at α/2 (`analysis.corrected_sequential`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.sequential import confidence_sequence
from scoregate.app.calibration_runs import evaluator_fingerprint
from scoregate.store.run_store import RunStore
from scoregate.store.stop_record import stop_fields
from scoregate.tracks.project import load_project
from support.judge_canary import Cli, Edit
from support.projects import Runs
from support.scripted_openai import ScriptedOpenAI, json_for_schema, markdown_summary, request_schema
from support.stop_early_runs import ITEMS, NO_SECTIONS, _grow_dataset

JUDGE = "ev_format_adherence_v1"
KEY = "format_adherence"
FAILS = [0] * 18 + [1] * 2
"""The judge on 20 items humans failed: specificity 0.9."""
PASSES = [1] * 19 + [0]
"""The judge on 20 items humans passed: sensitivity 0.95."""


def _judge_by_sections(server: ScriptedOpenAI, *, sections: bool = True) -> None:
    """Summaries with every section (or none); the judge passes a summary with sections and fails one without."""

    def reply(body: dict[str, Any]) -> str:
        schema = request_schema(body)
        if schema is None:
            return markdown_summary(body) if sections else NO_SECTIONS
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        answer = json_for_schema(schema)
        kind = schema["properties"][KEY].get("type")
        passed = NO_SECTIONS not in text
        answer[KEY] = passed if kind == "boolean" else int(passed)
        return json.dumps(answer)

    server.responder = reply


def _project(project: Path, edit_yaml: Edit, **gate: Any) -> None:
    _grow_dataset(project)

    def change(config: dict[str, Any]) -> None:
        config["gates"].append({"name": "fmt", "metric": KEY, "op": ">=", "threshold": 0.5, **gate})
        config["experiments"]["fmt_judge"] = {
            "dataset": "smoke_v1", "prompt": config["experiments"]["smoke"]["prompt"], "evaluators": [JUDGE],
            "gates": ["fmt"],
        }  # fmt: skip

    edit_yaml(project / "scoregate.yaml", change)


def _calibrate(project: Path, fails: list[int] = FAILS, passes: list[int] = PASSES) -> None:
    pairs = {f"cal-{i:02d}": [float(j), 0.0] for i, j in enumerate(fails)}
    pairs |= {f"cal-{len(fails) + i:02d}": [float(j), 1.0] for i, j in enumerate(passes)}
    record = {"version": 1, "fingerprint": evaluator_fingerprint(load_project(project).evaluators[JUDGE]),
              "model": {"name": "scripted", "provider": "openai", "model": "scripted-1"}, "human_key": "human",
              "calibrated_at": "2026-11-29T12:00:00+00:00", "pairs": pairs}  # fmt: skip
    (project / "calibrations").mkdir(exist_ok=True)
    (project / "calibrations" / f"{JUDGE}.json").write_text(json.dumps({"evaluator": JUDGE, "scores": {KEY: record}}))


def test_a_corrected_gate_stops_early_on_the_corrected_sequence(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    _project(project_dir, edit_yaml, estimate="corrected")
    _calibrate(project_dir)
    _judge_by_sections(scripted_server, sections=False)  # the reference: the judge fails every summary
    assert scoregate("run", "fmt_judge", "--no-cache", "--no-mlflow", "--no-report").code == 0
    reference = runs.latest()
    _judge_by_sections(scripted_server)

    done = scoregate("run", "fmt_judge", "--stop-early", "--against", reference, "--stop-batch", "5", "--no-cache",
                     "--no-mlflow", "--no-report")  # fmt: skip

    assert done.code == 0, done.output
    block = runs.summary()["stop_early"]
    n = block["items_run"]
    assert 0 < n < ITEMS and block["verdict"] == "better" and block["stop_reason"] == "settled"
    assert block["rule"]["alpha"] == pytest.approx(0.025)  # the run's half of α = 0.05
    youden = block["corrected"]
    # Clopper-Pearson at α/4 for each rate: 18 of 20 fails, 19 of 20 passes
    low0, high0 = stats.beta.ppf(0.00625, 18, 3), stats.beta.ppf(1 - 0.00625, 19, 2)
    low1, high1 = stats.beta.ppf(0.00625, 19, 2), stats.beta.ppf(1 - 0.00625, 20, 1)
    assert youden["low"] == pytest.approx(low0 + low1 - 1) and youden["high"] == pytest.approx(high0 + high1 - 1)
    judged = confidence_sequence(np.ones(n), lo=-1, hi=1, alpha=0.025, looks=list(range(5, n + 1, 5)))
    assert block["lower"] == pytest.approx(max(judged.lower) / youden["high"])  # every difference +1: Δp ≥ L
    assert block["lower"] > 0
    text = " ".join(done.output.split())
    assert f"95% confidence sequence [{block['lower']:.3g}, {block['upper']:.3g}] for the corrected paired " in text
    assert f"(judge's Youden J in [{youden['low']:.3g}, {youden['high']:.3g}], 40 labels)" in text
    store = RunStore.open(runs.root, runs.latest())
    mirrored = stop_fields(store.manifest_record, store.summary_record).params  # what MLflow and Langfuse record
    assert mirrored["stop_early.alpha"] == "0.025"
    assert json.loads(mirrored["stop_early.corrected"]) == {
        "youden_low": youden["low"], "youden_high": youden["high"], "alpha": 0.025, "labels": 40,
    }  # fmt: skip


def test_a_calibration_that_cannot_show_the_judge_better_than_chance_is_refused_before_any_call(
    project_dir: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    _project(project_dir, edit_yaml, estimate="corrected")
    _calibrate(project_dir, fails=[0] * 4 + [1] * 2, passes=[1] * 4 + [0] * 2)  # q0 = q1 = 0.667 on 6 + 6 labels
    _judge_by_sections(scripted_server)
    assert scoregate("run", "fmt_judge", "--no-cache", "--no-mlflow", "--no-report").code == 0
    reference = runs.latest()
    asked = len(scripted_server.judge_requests())

    refused = scoregate("run", "fmt_judge", "--stop-early", "--against", reference, "--no-mlflow")

    assert refused.code != 0 and "Traceback" not in refused.output
    text = " ".join(refused.output.split())
    assert "--stop-early: gate fmt asks for the corrected estimate, and its calibration set (6 human fails, 6" in text
    assert "cannot show the judge better than chance at 97.5%" in text
    assert len(scripted_server.judge_requests()) == asked and runs.ids() == [reference]
