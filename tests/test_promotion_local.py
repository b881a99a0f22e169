"""`scoregate promote --dry-run` without Langfuse: a local-only user sees the gate evidence of a prompt file's
version, read from the runs in a real MLflow store (moving a label still needs Langfuse)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, Runs
from scoregate.errors import ExitCode

PROMPT = "summarization-catchup"
Edit = Callable[[Path, Callable[[Any], None]], None]

pytestmark = pytest.mark.usefixtures("mlflow_store")


def gate_promotion_on(project_dir: Path, edit_yaml: Edit, experiments: list[str]) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda config: config.update(promotion={PROMPT: experiments}))


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
    assert re.search(rf"counters\s*│\s*{re.escape(runs.latest())}\s*│\s*pass", shown.out), shown.out
    assert "sections_present=pass" in shown.output and "tldr_caps_met=pass" in shown.output
    assert f"dry run: every gate passed for {PROMPT}@{version} in counters" in shown.output
    assert "Langfuse is not configured" in shown.output and "need it" in shown.output
    assert not (project_dir / "promotions.jsonl").exists()
    assert scoregate("promote", PROMPT, "--dry-run", "--version", version).code == 0  # the same, named


def test_missing_or_failed_evidence_is_shown_and_exits_3(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters", "smoke"])
    assert scoregate("run", "counters").code == 0

    refused = scoregate("promote", PROMPT, "--dry-run")

    assert refused.code == ExitCode.GATES_FAILED, refused.output
    assert re.search(rf"counters\s*│\s*{re.escape(runs.latest())}\s*│\s*pass", refused.out), refused.out
    assert "smoke: no run of summarization-catchup@local-" in refused.output
    assert "run it on the prompt files as they are: `scoregate run smoke --no-langfuse`" in refused.output


def test_without_langfuse_only_a_dry_run_is_possible(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters"])
    assert scoregate("run", "counters").code == 0

    moved = scoregate("promote", PROMPT, "--version", "2")
    unnamed = scoregate("promote", PROMPT)

    assert moved.code == 1 and "Langfuse is not configured" in moved.output
    assert unnamed.code == ExitCode.USAGE and "--version N" in unnamed.output
