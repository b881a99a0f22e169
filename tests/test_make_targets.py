"""The README's two commands work on a fresh clone: `make experiment` and `make test` each set up `.venv` first."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "target", ["experiment", "test", "test-all", "test-langfuse-old", "test-langfuse-sdk4", "lint"]
)
def test_a_target_on_a_fresh_clone_creates_the_virtual_environment_first(tmp_path: Path, target: str) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, clone / name)
    # Under `make test-all` this test runs inside make: MAKELEVEL makes the inner make print
    # "Entering directory '/tmp/pytest-of-...'", a line that is not a command.
    outer_make = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
    env = {key: value for key, value in os.environ.items() if key not in outer_make}
    planned = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout
    commands = [line for line in planned.splitlines() if not line.startswith("make[")]
    venv = next(i for i, line in enumerate(commands) if "-m venv .venv" in line)
    model = next(i for i, line in enumerate(commands) if "tools/build_llama_wheel.py" in line)
    first_own = next(
        i for i, line in enumerate(commands) if "pytest" in line or "scoregate validate" in line or "ruff" in line
    )
    assert venv < model < first_own, planned
