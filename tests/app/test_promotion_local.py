"""`scoregate promote` without Langfuse: a local-only project promotes a prompt file's version, gate-checked from the
runs in a real MLflow store, audited in promotions.jsonl, and its regression gates read that as production."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from support.projects import CliResult, Runs
from support.promotion_runs import PROMPT, gate_promotion_on

HOWTO = "summarization-howto"
Edit = Callable[[Path, Callable[[Any], None]], None]
pytestmark = pytest.mark.usefixtures("mlflow_store")


def test_a_dry_run_without_langfuse_shows_the_evidence_of_the_prompt_files_version(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters"])
    assert scoregate("run", "counters").code == 0  # local prompt files (no Langfuse keys), mirrored to MLflow
    version = runs.manifest()["receipts"]["prompts"][PROMPT]["version"]
    assert version.startswith("local-")

    shown = scoregate("promote", PROMPT, "--dry-run")

    assert shown.code == 0, shown.output
    assert f"evidence for {PROMPT}@{version}" in shown.output
    assert f"counters: run {runs.latest()}, model scripted verdict: PASS" in shown.output
    assert "gates: sections_present pass, tldr_caps_met pass" in shown.output
    assert f"dry run: every gate passed for {PROMPT}@{version} in counters" in shown.output
    assert f"dry run, would promote 'production': no version → {version} of {PROMPT}" in shown.output
    assert "the label is held in promotions.jsonl alone" in shown.output
    assert not (project_dir / "promotions.jsonl").exists()
    assert scoregate("promote", PROMPT, "--dry-run", "--version", version).code == 0  # the same, named


def test_missing_or_failed_evidence_is_shown_and_exits_3(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters", "smoke"])
    assert scoregate("run", "counters").code == 0

    refused = scoregate("promote", PROMPT, "--dry-run")

    assert refused.code == ExitCode.GATES_FAILED, refused.output
    assert f"counters: run {runs.latest()}, model scripted verdict: PASS" in refused.output
    assert "smoke: no run" in refused.output
    assert "- smoke: no run of summarization-catchup@local-" in refused.output
    assert "run it on the prompt files as they are: `scoregate run smoke`" in refused.output
    assert "--no-langfuse" not in refused.output  # nothing to turn off in a project without Langfuse
    assert "--force" not in refused.output  # nothing can force a promotion without Langfuse


def regression_project(project_dir: Path, edit_yaml: Edit) -> None:
    """Both prompts of the route gated on `counters`; experiment `guarded` = counters + a regression gate."""

    def change(config: dict[str, Any]) -> None:
        config["promotion"] = {PROMPT: ["counters"], HOWTO: ["counters"]}
        config["gates"].append({
            "name": "no_regression_sections", "metric": "required_sections_present",
            "stat": "paired_noninferiority", "compare_to": "production", "margin": 0.2, "op": ">=", "threshold": 0,
        })  # fmt: skip
        config["experiments"]["guarded"] = {
            **config["experiments"]["counters"],
            "gates": ["sections_present", "no_regression_sections"],
        }

    edit_yaml(project_dir / "scoregate.yaml", change)


def test_a_local_promotion_is_gate_checked_audited_and_read_by_the_regression_gate(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    regression_project(project_dir, edit_yaml)
    assert scoregate("run", "guarded").code == 0  # no production baseline yet: INCOMPLETE, and says what to do
    gate = runs.summary()["gates"][1]
    assert gate["status"] == "incomplete"
    assert f"promote a version with `scoregate promote {PROMPT}`" in gate["detail"]
    assert scoregate("run", "counters").code == 0
    evidence = runs.latest()
    versions = runs.manifest()["receipts"]["prompts"]

    promoted = scoregate("promote", PROMPT)
    assert promoted.code == 0, promoted.output
    assert scoregate("promote", HOWTO).code == 0

    version = versions[PROMPT]["version"]
    assert f"promoted 'production': no version → {version} of {PROMPT}; recorded in promotions.jsonl" in (
        promoted.output
    )
    record = json.loads((project_dir / "promotions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert {k: record[k] for k in ("action", "prompt", "label", "version", "previous_version", "local")} == {
        "action": "promote", "prompt": PROMPT, "label": "production", "version": version,
        "previous_version": None, "local": True,
    }  # fmt: skip
    assert [e["scoregate_run_id"] for e in record["evidence"]] == [evidence]
    assert record["evidence"][0]["model"] == "scripted" and record["langfuse_host"] is None
    from mlflow.tracking import MlflowClient

    tags = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"]).get_run(record["evidence_runs"][0]).data.tags
    audit = json.loads(tags["scoregate.promotions"])
    assert [(a["prompt"], a["version"]) for a in audit] == [(PROMPT, version), (HOWTO, versions[HOWTO]["version"])]

    again = scoregate("promote", PROMPT)
    assert again.code == 0 and f"nothing to do: {version} of {PROMPT} already holds 'production'" in again.output
    listing = scoregate("promotions")
    assert listing.code == 0 and version in listing.output and f"v{version}" not in listing.output

    assert scoregate("run", "guarded", "--fail-on-gates").code == 0, "the gate found the promoted versions' run"
    gate = runs.summary()["gates"][1]
    assert gate["status"] == "pass", gate
    assert re.search(rf"vs production run {evidence} \(", gate["detail"]), gate["detail"]


def test_a_local_promotion_cannot_be_forced_and_says_what_to_do(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters"])

    forced = scoregate("promote", PROMPT, "--force", "--reason", "trust me")
    langfuse_version = scoregate("promote", PROMPT, "--version", "2")

    assert forced.code == 1 and "without Langfuse a promotion only records" in forced.output
    assert "then run `scoregate run counters`" in forced.output and "--no-langfuse" not in forced.output
    assert langfuse_version.code == 1 and "v2 of 'summarization-catchup' is a Langfuse version" in (
        langfuse_version.output
    )
    assert "Langfuse is not configured" in langfuse_version.output
    assert not (project_dir / "promotions.jsonl").exists()


def test_a_local_rollback_returns_the_label_to_the_version_before(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters"])
    assert scoregate("run", "counters").code == 0
    first = runs.manifest()["receipts"]["prompts"][PROMPT]["version"]
    assert scoregate("promote", PROMPT).code == 0
    brief = {"role": "user", "content": "Be brief."}
    edit_yaml(project_dir / "prompts" / f"{PROMPT}.yaml", lambda spec: spec["messages"].append(brief))
    assert scoregate("run", "counters").code == 0
    second = runs.manifest()["receipts"]["prompts"][PROMPT]["version"]
    assert second != first
    assert scoregate("promote", PROMPT).code == 0

    back = scoregate("promote", "--rollback", PROMPT, "--reason", "worse in review")

    assert back.code == 0, back.output
    assert f"rolled back 'production': {second} → {first} of {PROMPT}" in back.output
    last = json.loads((project_dir / "promotions.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert (last["action"], last["version"], last["previous_version"]) == ("rollback", first, second)


def test_a_production_label_in_a_prompt_file_is_refused_with_the_command_that_sets_it(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    edit_yaml(project_dir / "prompts" / f"{PROMPT}.yaml", lambda spec: spec.update(labels=["production"]))

    refused = scoregate("run", "counters")

    assert refused.code == 1
    assert "the `production` label is set only by `scoregate promote`, not in a prompt file" in refused.output
    assert "remove it and run `scoregate promote summarization-catchup` once its gates pass" in refused.output
    assert "(with Langfuse or without)" in refused.output
