"""What counts as promotion evidence: a finished run of the whole dataset, on the model the experiment runs on.

Real runs of the test project on the scripted server, mirrored to a real MLflow store; `scoregate promote
--dry-run` without Langfuse reads them back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.promotion import PromotionRefused, promote
from scoregate.app.run.receipts import local_prompt_version
from scoregate.errors import ExitCode
from scoregate.tracks.project import load_project
from support.projects import CliResult, Runs, canned_model
from support.promotion_runs import logged_run
from support.scripted_openai import ScriptedOpenAI
from support.stop_early_runs import NO_SECTIONS, _grow_dataset

PROMPT = "summarization-catchup"
Edit = Callable[[Path, Callable[[Any], None]], None]

pytestmark = pytest.mark.usefixtures("mlflow_store")


def gate_promotion_on_counters(project_dir: Path, edit_yaml: Edit) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={PROMPT: ["counters"]}))


def test_a_run_that_stopped_early_is_no_evidence(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit, scripted_server: ScriptedOpenAI
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    _grow_dataset(project_dir)  # 60 items
    scripted_server.responder = lambda body: NO_SECTIONS
    assert scoregate("run", "counters", "--no-cache", "--no-mlflow", "--no-report").code == 0
    reference = runs.latest()
    scripted_server.responder = scripted_server.default_reply
    stopped = scoregate(
        "run", "counters", "--stop-early", "--against", reference, "--stop-batch", "5", "--no-cache", "--no-report"
    )
    assert stopped.code == 0, stopped.output
    assert runs.manifest()["status"] == "stopped_early"
    items_run = runs.summary()["stop_early"]["items_run"]
    assert runs.summary()["verdict"] == "pass"  # its gates passed on the items it ran

    stopped_run = runs.latest()

    shown = scoregate("promote", PROMPT, "--dry-run")  # the older full run is the evidence: its gates failed

    assert shown.code == ExitCode.GATES_FAILED, shown.output
    assert f"gates did not pass in run {reference}: sections_present fail" in shown.output
    assert f"(skipped newer run {stopped_run}: it stopped early at {items_run} of 60 items: not the whole dataset)" in (
        shown.output
    )
    assert "every gate passed" not in shown.output
    assert scoregate("runs", "invalidate", reference, "--reason", "no sections on purpose").code == 0

    shown = scoregate("promote", PROMPT, "--dry-run")

    assert shown.code == ExitCode.GATES_FAILED, shown.output
    assert f"the newest ({stopped_run}) stopped early at {items_run} of 60 items: not the whole dataset" in (
        shown.output
    )
    assert (
        "run the whole dataset: `scoregate run counters` (without --stop-early), or continue this one: "
        f"`scoregate run --resume {stopped_run}`" in shown.output
    )
    assert "every gate passed" not in shown.output


def test_a_run_on_another_model_than_the_experiments_is_no_evidence(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"].update(canned=canned_model()))
    assert scoregate("run", "counters", "--model", "canned", "--no-report").code == 0
    canned_run = runs.latest()

    refused = scoregate("promote", PROMPT, "--dry-run")

    assert refused.code == ExitCode.GATES_FAILED, refused.output
    assert (
        f"the newest ({canned_run}) ran on model 'canned', not 'scripted', the model experiment counters runs on"
        in refused.output
    )
    assert scoregate("run", "counters", "--no-report").code == 0
    shown = scoregate("promote", PROMPT, "--dry-run")
    assert shown.code == 0, shown.output
    assert re.search(rf"counters: run {re.escape(runs.latest())}, model scripted\b", shown.output), shown.output


QUARANTINED = {"sections_present": "pass", "tldr_caps_met": "pass on 5 of 6, 1 quarantined"}


@pytest.mark.parametrize(
    ("rule", "breaking", "refused"),
    [("refuse_if_breaking", 1, True), ("refuse_if_breaking", 0, False), ("refuse", 0, True), ("allow", 1, False)],
)
def test_settings_flaky_promotion_decides_a_gate_passed_with_flaky_items_kept_out(
    project_dir: Path, edit_yaml: Edit, rule: str, breaking: int, refused: bool
) -> None:
    def change(config: dict[str, Any]) -> None:
        config["promotion"] = {PROMPT: ["counters"]}
        config["settings"]["flaky"] = {"promotion": rule}

    edit_yaml(project_dir / "scoregate.yaml", change)
    version = local_prompt_version(load_project(project_dir).prompts[PROMPT])
    kept = {"kept_out": 1, "breaking": breaking, "gated": 5, "total": 6}
    logged_run(project_dir, "counters", gates=QUARANTINED, version=version,
               tags={"gate.tldr_caps_met.quarantine": json.dumps(kept)})  # fmt: skip

    if not refused:
        assert promote(project_dir, PROMPT, version=None, dry_run=True).failures == []
        return
    with pytest.raises(PromotionRefused) as refusal:
        promote(project_dir, PROMPT, version=None, dry_run=True)
    broke = "; 1 of them broke it in that run" if breaking else ""
    assert f"tldr_caps_met pass on 5 of 6, 1 quarantined{broke} (settings.flaky.promotion is {rule})" in (
        refusal.value.message
    )
    assert (
        "the pass rests on flaky items kept out: `scoregate items flaky counters` names them; steady or fix them, "
        "then run it again: `scoregate run counters`" in refusal.value.message
    )


def test_a_run_mirrored_when_param_model_held_the_provider_id_is_read_by_its_model_name(
    project_dir: Path, edit_yaml: Edit
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    version = local_prompt_version(load_project(project_dir).prompts[PROMPT])
    logged_run(project_dir, "counters", version=version, model="scripted-1", model_name="scripted")

    result = promote(project_dir, PROMPT, version=None, dry_run=True)

    assert result.failures == [] and result.evidence[0].model == "scripted"


def test_a_run_kept_only_in_the_local_store_is_evidence_and_the_newest_run_counts(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"].update(canned=canned_model()))
    assert scoregate("run", "counters", "--model", "canned", "--no-report").code == 0  # in MLflow: no evidence
    assert scoregate("run", "counters", "--no-mlflow", "--no-report").code == 0  # the newest, on disk alone
    local_only = runs.latest()

    shown = scoregate("promote", PROMPT, "--dry-run")

    assert shown.code == 0, shown.output
    assert f"counters: run {local_only}, model scripted (not in MLflow) verdict: PASS" in shown.output
    assert "dry run: every gate passed" in shown.output
    promoted = scoregate("promote", PROMPT)
    assert promoted.code == 0, promoted.output
    assert (
        f"warning: evidence run {local_only} is not in MLflow, so promotions.jsonl alone records this promotion "
        f"against it; mirror the run with `scoregate mlflow-sync {local_only}`" in promoted.output
    )
    (record,) = [json.loads(line) for line in (project_dir / "promotions.jsonl").read_text().splitlines()]
    assert [e["scoregate_run_id"] for e in record["evidence"]] == [local_only] and record["evidence_runs"] == []


def test_a_newer_run_passed_over_for_an_older_valid_one_is_named_with_why(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"].update(canned=canned_model()))
    assert scoregate("run", "counters", "--no-report").code == 0
    valid = runs.latest()
    assert scoregate("run", "counters", "--model", "canned", "--no-report").code == 0
    canned_run = runs.latest()

    shown = scoregate("promote", PROMPT, "--dry-run")

    assert shown.code == 0, shown.output
    assert f"counters: run {valid}, model scripted" in shown.output
    assert (
        f"skipped: newer run {canned_run}: it ran on model 'canned', not 'scripted', the model experiment counters "
        "runs on" in shown.output
    )


def _limited(scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit) -> None:
    assert scoregate("run", "counters", "--limit", "2", "--no-mlflow", "--no-report").code == 0


def _on_canned(scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["models"].update(canned=canned_model()))
    assert scoregate("run", "counters", "--model", "canned", "--no-mlflow", "--no-report").code == 0


def _invalidated(scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--no-report").code == 0
    run_id = Runs(project_dir).latest()
    assert scoregate("runs", "invalidate", run_id, "--reason", "judge misconfigured").code == 0


def _gates_changed(scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit) -> None:
    assert scoregate("run", "counters", "--no-mlflow", "--no-report").code == 0
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config["experiments"]["counters"].update(gates=[
        "sections_present"]))  # fmt: skip


@pytest.mark.parametrize(
    ("make", "why", "fix"),
    [
        (_limited, "ran only 2 items (--limit)", "run the whole dataset: `scoregate run counters` (without --limit)"),
        (
            _on_canned,
            "ran on model 'canned', not 'scripted', the model experiment counters runs on (scoregate.yaml)",
            "run it on model 'scripted': `scoregate run counters --model scripted`",
        ),
        (_invalidated, "was invalidated", "run it again: `scoregate run counters`"),
        (
            _gates_changed,
            "was judged by other gates than scoregate.yaml has now",
            "run it again under today's gates: `scoregate run counters`",
        ),
    ],
    ids=["limit", "other-model", "invalidated", "other-gates"],
)
def test_a_local_run_is_held_to_the_same_rules_and_each_cause_names_its_own_fix(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    runs: Runs,
    edit_yaml: Edit,
    make: Callable[[Callable[..., CliResult], Path, Edit], None],
    why: str,
    fix: str,
) -> None:
    gate_promotion_on_counters(project_dir, edit_yaml)
    make(scoregate, project_dir, edit_yaml)

    refused = scoregate("promote", PROMPT, "--dry-run")

    assert refused.code == ExitCode.GATES_FAILED, refused.output
    assert f"the newest ({runs.latest()}) {why}" in refused.output
    assert fix in refused.output
    assert "--no-langfuse" not in refused.output  # a project without Langfuse has nothing to turn off
