"""`promote` and the drift canary: refused while a pinned judge that decides a gate has drifted beyond its
tolerance, or has no calibration or canary newer than its last change; `--force --reason` records the override."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.promotion import promote, promotion_history
from scoregate.errors import ExitCode
from scoregate.tracks.project import load_project
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.judge_canary import HUMAN, JUDGE, LOST, PROMPT, calibrate_baseline, judge_answers, pinned  # noqa: F401
from support.projects import CliResult, Runs
from support.promotion_runs import logged_run, upload
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
Edit = Callable[[Path, Callable[[Any], None]], None]

pytestmark = pytest.mark.usefixtures("mlflow_store")


@pytest.fixture
def gated(pinned: Path, edit_yaml: Edit) -> Path:  # noqa: F811
    """The pinned project with an experiment `judged` whose gate the actionability judge decides, gating PROMPT."""

    def change(config: dict[str, Any]) -> None:
        route = config["experiments"]["smoke"]["prompt"]
        config["gates"].append({"name": "actionable", "metric": "actionability_score", "op": ">=", "threshold": 1})
        config["experiments"]["judged"] = {
            "dataset": "smoke_v1", "prompt": route, "evaluators": [JUDGE], "gates": ["actionable"],
        }  # fmt: skip
        config["promotion"] = {PROMPT: ["judged"]}

    edit_yaml(pinned / "scoregate.yaml", change)
    return pinned


def flat(result: CliResult) -> str:
    """The output with every line break and run of spaces as one space."""
    return " ".join(result.output.split())


def test_promote_refuses_an_uncalibrated_changed_or_drifted_judge_and_passes_a_recalibrated_one(
    gated: Path, scripted_server: ScriptedOpenAI, scoregate: Cli, runs: Runs, edit_yaml: Edit
) -> None:
    judge_answers(scripted_server, HUMAN)
    assert scoregate("run", "judged").code == 0  # the evidence: its gate passes, mirrored to MLflow

    never = scoregate("promote", PROMPT, "--dry-run")
    assert never.code == ExitCode.GATES_FAILED, never.output
    assert f"judged.actionable: judge {JUDGE} (actionability_score) has no calibration" in flat(never)

    calibrate_baseline(scoregate, runs)
    calibrated = scoregate("promote", PROMPT, "--dry-run")
    assert calibrated.code == 0, calibrated.output
    assert f"judge {JUDGE} (judged.actionable): calibrated; no canary since" in flat(calibrated)

    evaluator = gated / "evaluators" / f"{JUDGE}.yaml"
    edit_yaml(evaluator, lambda spec: spec.update(prompt=spec["prompt"] + "\nBe strict."))
    changed = scoregate("promote", PROMPT, "--dry-run")
    assert changed.code == ExitCode.GATES_FAILED, changed.output
    assert f"judge {JUDGE} has no calibration newer than its last change (its prompt, rubric or settings changed" in (
        flat(changed)
    )
    assert "run `scoregate calibrate --canary`" in flat(changed)

    judge_answers(scripted_server, LOST)
    assert scoregate("calibrate", "--canary").code == 0
    drifted = scoregate("promote", PROMPT, "--dry-run")
    assert drifted.code == ExitCode.GATES_FAILED, drifted.output
    text = flat(drifted)
    assert f"judged.actionable: judge {JUDGE} has drifted (canary run {runs.latest()} of" in text
    assert "spearman 1.000 at calibration, -0." in text and "beyond the tolerance of -0.1" in text
    assert "bring each judge named back in line and check it with `scoregate calibrate --canary`" in text

    judge_answers(scripted_server, HUMAN)
    assert scoregate("calibrate", "--canary").code == 0
    recalibrated = scoregate("promote", PROMPT, "--dry-run")
    assert recalibrated.code == 0, recalibrated.output
    assert f"judge {JUDGE} (judged.actionable): within its drift tolerance" in flat(recalibrated)


def test_forcing_past_a_drifted_judge_records_the_judge_and_its_figures(
    gated: Path,
    scripted_server: ScriptedOpenAI,
    scoregate: Cli,
    runs: Runs,
    fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge_answers(scripted_server, HUMAN)
    calibrate_baseline(scoregate, runs)
    judge_answers(scripted_server, LOST)
    assert scoregate("calibrate", "--canary").code == 0
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    prompts = load_project(gated).prompts
    upload(fake_langfuse, prompts[PROMPT], ["production"])
    upload(fake_langfuse, prompts[PROMPT], ["candidate"])
    logged_run(gated, "judged", gates={"actionable": "pass"})

    refused = scoregate("promote", PROMPT, "--version", "2")
    assert refused.code == ExitCode.GATES_FAILED and f"judge {JUDGE} has drifted" in flat(refused)

    result = promote(gated, PROMPT, version=2, force=True, reason="judge checked by hand")

    assert result.applied
    (record,) = promotion_history(gated)
    assert record["forced"] is True and record["reason"] == "judge checked by hand"
    assert [f.split(":")[0] for f in record["failures"]] == ["judged.actionable"]
    (judge,) = record["judges"]
    assert judge["judge"] == JUDGE and judge["gates"] == ["judged.actionable"]
    assert judge["figures"]["metric"] == "spearman" and judge["figures"]["calibrated"] == 1.0
    assert judge["figures"]["change"]["value"] < -0.1 and judge["figures"]["tolerance"] == 0.1
