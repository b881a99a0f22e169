"""A really full disk (ENOSPC, not a file-size limit): the run store lives on a tiny tmpfs mounted in a private
mount namespace (`unshare -m`, or `unshare -rm` without root), so every write fails once it is full, the
progress files included. The run must end with one clear error naming the path, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scoregate.errors import ExitCode
from support.grow_dataset import grow_dataset
from support.projects import SCOREGATE_BIN, Runs


def on_tiny_disk(project: Path, size: str, *command: str) -> subprocess.CompletedProcess[str]:
    """Run `command` with `project/runs` on a tmpfs of `size`; copy what it stored back into `project/runs`."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("util-linux `unshare` is not installed")
    kept = project / "runs-kept"
    (project / "runs").mkdir(exist_ok=True)
    script = (
        'mount -t tmpfs -o size="$1" tmpfs "$2/runs" || exit 99; shift 2; "$@"; rc=$?; '
        'cp -a "$0/runs/." "$0/runs-kept/"; exit $rc'
    )
    kept.mkdir()
    isolate = ["-m"] if os.geteuid() == 0 else ["-rm"]
    done = subprocess.run(
        [unshare, *isolate, "sh", "-c", script, str(project), size, str(project), *command],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    if done.returncode == 99 or "unshare:" in done.stderr:
        pytest.skip(f"cannot mount a private tmpfs here: {done.stderr.strip()}")
    shutil.rmtree(project / "runs")
    kept.rename(project / "runs")
    return done


def test_a_full_disk_during_the_items_ends_in_one_clear_error_and_the_store_resumes(
    project_dir: Path, runs: Runs
) -> None:
    ids = grow_dataset(project_dir, 60)  # ~230 kB of results: far more than the 64 kB disk holds

    done = on_tiny_disk(
        project_dir, "64k", str(SCOREGATE_BIN), "run", "counters", "--no-cache", "--no-mlflow", "-C", str(project_dir)
    )

    text = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == int(ExitCode.ERROR), text
    assert "Traceback" not in text and "OSError" not in text and "Errno" not in text, done.stderr
    run_id = runs.latest()
    assert f"error: cannot write {runs.root / run_id}/" in text, done.stderr
    assert "No space left on device" in text
    assert f"resume with `scoregate run --resume {run_id}`" in text
    assert text.count("error:") == 1, done.stderr
    lines = (runs.root / run_id / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    whole = [json.loads(line) for line in lines if line.endswith("\n")]  # a cut last line is repaired on resume
    assert 0 < len(whole) < len(ids)

    resumed = subprocess.run(
        [str(SCOREGATE_BIN), "run", "--resume", run_id, "--no-cache", "--no-mlflow", "-C", str(project_dir)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sorted(r["item_id"] for r in runs.results(run_id)) == sorted(ids)


def test_an_os_error_that_reaches_the_cli_is_one_line_naming_the_path(
    project_dir: Path, runs: Runs, mlflow_store: str
) -> None:
    command = [str(SCOREGATE_BIN), "run", "counters", "--no-mlflow", "-C", str(project_dir)]
    assert subprocess.run(command, capture_output=True, timeout=180).returncode == 0
    run_id = runs.latest()
    blocker = runs.root / run_id / "metrics.json.tmp"
    blocker.mkdir()  # where the per-call telemetry is written before its rename

    done = subprocess.run(
        [str(SCOREGATE_BIN), "mlflow-sync", run_id, "-C", str(project_dir)], capture_output=True, text=True, timeout=180
    )

    assert done.returncode == int(ExitCode.ERROR), done.stderr
    assert "Traceback" not in done.stderr and "Errno" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [f"error: {blocker}: Is a directory"]


def test_output_to_a_full_device_is_one_error_line(project_dir: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(SCOREGATE_BIN), "run", "-C", str(project_dir)], stdout=full, stderr=subprocess.PIPE, text=True
        )

    assert done.returncode == int(ExitCode.ERROR), done.stderr
    assert done.stderr.splitlines()[0] == "error: No space left on device", done.stderr
    assert "Traceback" not in done.stderr
