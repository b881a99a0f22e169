"""`scoregate promote --dry-run` without Langfuse, through the real executable at 80 columns without a TTY: a
refused promotion reads line by line and offers no --force."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.errors import ExitCode
from support.projects import SCOREGATE_BIN, CliResult, Runs
from support.promotion_runs import PROMPT, gate_promotion_on

Edit = Callable[[Path, Callable[[Any], None]], None]
pytestmark = pytest.mark.usefixtures("mlflow_store")


def cli80(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real executable at 80 columns, its output a pipe (no TTY)."""
    return subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip


def test_a_refused_dry_run_reads_line_by_line_at_80_columns_and_offers_no_force(
    scoregate: Callable[..., CliResult], project_dir: Path, runs: Runs, edit_yaml: Edit
) -> None:
    gate_promotion_on(project_dir, edit_yaml, ["counters", "smoke"])
    assert scoregate("run", "counters").code == 0

    done = cli80(project_dir, "promote", PROMPT, "--dry-run")

    lines = (done.stdout + done.stderr).splitlines()
    assert done.returncode == ExitCode.GATES_FAILED
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    assert f"counters: run {runs.latest()}, model scripted" in lines
    assert "  verdict: PASS" in lines
    assert "  gates: sections_present pass, tldr_caps_met pass" in lines
    assert "smoke: no run" in lines
    assert any(line.startswith("  - smoke: no run of summarization-catchup@local-") for line in lines)
    assert "--force" not in done.stdout + done.stderr
    assert "on the prompt files as they are (`scoregate run EXPERIMENT`)" in " ".join(" ".join(lines).split())
