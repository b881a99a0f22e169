"""A priced test project and the real `scoregate` executable for forecast and budget tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.projects import SCOREGATE_BIN, CliResult

PRICE_IN, PRICE_OUT = 2.0, 8.0
"""USD per million tokens the test's model is priced at."""


ITEMS, CALLS_PER_ITEM = 6, 4
"""The test project's smoke items and each one's calls: the task and three judges."""


def run_cli(project: Path, *args: str) -> CliResult:
    """Run the real `scoregate` executable in the project; no traceback is ever shown."""
    done = subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(project)], capture_output=True, text=True, timeout=120, check=False
    )
    assert "Traceback" not in done.stdout + done.stderr
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def priced(project_dir: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]) -> Path:
    """The test project with its model priced (so every call has a cost)."""

    def price(config: Any) -> None:
        config["models"]["scripted"].update(input_cost_per_mtok=PRICE_IN, output_cost_per_mtok=PRICE_OUT)

    edit_yaml(project_dir / "scoregate.yaml", price)
    return project_dir
