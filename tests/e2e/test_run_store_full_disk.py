"""The run store on a full disk: the real executable fails the run cleanly, and a resume finishes it."""

from __future__ import annotations

import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.errors import ExitCode
from support.projects import DATASET_IDS, SCOREGATE_BIN, CliResult, Runs


@pytest.fixture
def project_dir(canned_project_dir: Path) -> Path:
    """These runs need only canned replies: the project's model is `provider: scripted`, no server."""
    return canned_project_dir


def test_a_full_disk_fails_the_run_cleanly_and_resume_finishes_it(
    project_dir: Path, scoregate: Callable[..., CliResult], runs: Runs
) -> None:
    def small_disk() -> None:  # writes past 12 kB fail, as on a full disk (Python ignores SIGXFSZ)
        resource.setrlimit(resource.RLIMIT_FSIZE, (12_000, 12_000))

    process = subprocess.run(
        [str(SCOREGATE_BIN), "run", "counters", "--no-cache", "--no-mlflow", "-C", str(project_dir)],
        capture_output=True, text=True, preexec_fn=small_disk, timeout=120,
    )  # fmt: skip

    text = " ".join((process.stdout + process.stderr).split())
    assert process.returncode == int(ExitCode.ERROR), text
    assert "Traceback" not in text
    run_id = runs.latest()
    assert f"cannot write {runs.root / run_id / 'results.jsonl'}: File too large" in text
    assert f"scoregate run --resume {run_id}" in text
    manifest = runs.manifest(run_id)
    assert manifest["status"] == "failed"
    assert "File too large" in manifest["failure"]

    resumed = scoregate("run", "--resume", run_id, "--no-cache", "--no-mlflow")

    assert resumed.code == 0, resumed.output
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(DATASET_IDS)
