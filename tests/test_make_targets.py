"""The README's two commands work on a fresh clone: `make experiment` and `make test` each set up `.venv` first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", ["experiment", "test", "test-all", "test-langfuse-sdk4", "lint"])
def test_a_target_on_a_fresh_clone_creates_the_virtual_environment_first(tmp_path: Path, target: str) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, clone / name)
    planned = subprocess.run(
        ["make", "--dry-run", target], cwd=clone, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    commands = planned.splitlines()
    venv = next(i for i, line in enumerate(commands) if "-m venv .venv" in line)
    model = next(i for i, line in enumerate(commands) if "tools/build_llama_wheel.py" in line)
    first_own = next(
        i for i, line in enumerate(commands) if "pytest" in line or "scoregate validate" in line or "ruff" in line
    )
    assert venv < model < first_own, planned
