"""The flaky-items and slice-gates pages run from shipped files: their commands, run on a copy of
`examples/scripted-demo/`, print what the pages show."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.demo_transcripts import DEMO, in_order, transcripts, unchecked
from support.markdown_docs import DOCS, REPO, read, shell_commands
from support.projects import SCOREGATE_BIN

RUN_ID = re.compile(r"\b(digest|feeds_production|feeds)-\d{8}-\d{6}-[0-9a-f]{4}\b")
PAGES = [DOCS / "running" / "flaky-items.md", DOCS / "results" / "slice-gates.md"]


def normal(line: str) -> str:
    """A line with its run ids as RUN and no trailing blanks (a run id holds the time it started)."""
    return RUN_ID.sub("RUN", line).rstrip()


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_pages_commands_run_on_the_shipped_demo_and_print_what_the_page_shows(
    page: Path, tmp_path: Path, migrated_mlflow_db: Path
) -> None:
    commands = shell_commands(read(page), "scoregate")
    assert commands and all(args[-2:] == ["-C", DEMO] for args in commands), commands
    shutil.copytree(REPO / DEMO, tmp_path / DEMO)
    shutil.copy(migrated_mlflow_db, tmp_path / "mlflow.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "ANTHROPIC_"))}
    env.update(COLUMNS="80", MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}")
    shown = transcripts(page)
    assert shown, f"{page.name} shows no output of its commands"
    assert unchecked(shown) == [], f"{page.name} shows transcripts with no line to check"
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
