"""`make nightly` names a failed gate as scoregate's exit 3; GNU make itself can only exit 0, 1 (-q) or 2."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.projects import REPO
from support.scripted_openai import ScriptedOpenAI


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_nightly_names_a_failed_gate_as_scoregate_exit_3(
    project_dir: Path, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.judge_score = 1
    (project_dir / ".venv").symlink_to(REPO / ".venv")
    env = {**os.environ, "SCOREGATE_MODEL": "scripted"}
    keep_setup = ["-o", ".venv/.installed", "-o", ".venv/.local-model"]  # the venv is there; never rebuild it here
    command = ["make", "-f", str(REPO / "Makefile"), *keep_setup, "nightly", "ARGS=--no-mlflow"]

    result = subprocess.run(
        command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )

    output = result.stdout + result.stderr
    assert "verdict: FAIL" in output
    assert "nightly: gates did not pass (scoregate exit 3)" in output
    assert "nightly] Error 3" in output  # make's own line keeps scoregate's code
    assert result.returncode == 2  # what GNU make returns for any failed recipe
