"""The flaky-items and slice-gates pages run from shipped files: their commands, run on a copy of
`examples/scripted-demo/`, print what the pages show."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SCOREGATE_BIN
from markdown_docs import DOCS, FENCE, REPO, read, shell_commands

DEMO = "examples/scripted-demo"
RUN_ID = re.compile(r"\b(digest|feeds_production|feeds)-\d{8}-\d{6}-[0-9a-f]{4}\b")
PAGES = [DOCS / "running" / "flaky-items.md", DOCS / "results" / "slice-gates.md"]


def transcripts(page: Path) -> dict[str, list[str]]:
    """Each `$ scoregate ...` text block of the page on the demo project: the command → the lines it shows."""
    shown = {}
    for kind, body in FENCE.findall(read(page)):
        lines = body.rstrip("\n").splitlines()
        if kind == "text" and lines and lines[0].startswith("$ scoregate ") and DEMO in lines[0]:
            shown[lines[0].removeprefix("$ ")] = [line for line in lines[1:] if line.strip() not in ("…", "")]
    return shown


def normal(line: str) -> str:
    """A line with its run ids as RUN and no trailing blanks (a run id holds the time it started)."""
    return RUN_ID.sub("RUN", line).rstrip()


def in_order(expected: list[str], actual: list[str]) -> list[str]:
    """The expected lines not found in `actual` in the same order (each after the one before)."""
    missing, at = [], 0
    for line in expected:
        found = next((i for i in range(at, len(actual)) if actual[i] == line), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_pages_commands_run_on_the_shipped_demo_and_print_what_the_page_shows(
    page: Path, tmp_path: Path, migrated_mlflow_db: Path
) -> None:
    commands = shell_commands(read(page), "scoregate")
    assert commands and all(args[-2:] == ["-C", DEMO] for args in commands), commands
    shutil.copytree(REPO / DEMO, tmp_path / DEMO)
    shutil.copy(migrated_mlflow_db, tmp_path / "mlflow.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "ANTHROPIC_"))}
    env.update(COLUMNS="100", MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}")
    shown = transcripts(page)
    assert shown, f"{page.name} shows no output of its commands"
    for args in commands:
        done = subprocess.run(
            [str(SCOREGATE_BIN), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        command = " ".join(["scoregate", *args])
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 3), f"{command}: exit {done.returncode}\n{done.stdout}{done.stderr}"
        if command in shown:
            actual = [normal(line) for line in (done.stdout + done.stderr).splitlines()]
            missing = in_order([normal(line) for line in shown.pop(command)], actual)
            assert missing == [], f"{command} did not print:\n" + "\n".join(missing) + "\n---\n" + done.stdout
    assert shown == {}, f"{page.name} shows the output of commands it does not list: {list(shown)}"
