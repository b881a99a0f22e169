"""The flaky-items and slice-gates pages run from shipped files: their commands, run on a copy of
`examples/scripted-demo/`, print what the pages show."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.markdown_docs import DOCS, FENCE, REPO, read, shell_commands
from support.projects import SCOREGATE_BIN

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


def unchecked(shown: dict[str, list[str]]) -> list[str]:
    """The commands whose transcript shows no line to check (only `…`): an example that proves nothing."""
    return [command for command, lines in shown.items() if not lines]


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


def test_a_transcript_with_no_line_to_check_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        f"```text\n$ scoregate run feeds -C {DEMO}\n…\n\n…\n```\n\n"
        f"```text\n$ scoregate promote feed-digest -C {DEMO}\nverdict: PASS\n```\n",
        encoding="utf-8",
    )

    assert unchecked(transcripts(page)) == [f"scoregate run feeds -C {DEMO}"]


def test_the_readme_quotes_the_slice_gates_pages_transcript() -> None:
    readme = read(REPO / "README.md")
    quoted = readme[readme.index("- **Slice gates**") :].split("- **Flaky items**")[0]
    (block,) = re.findall(r"```text\n(.*?)```", quoted, re.S)  # indented under its list item
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    shown = transcripts(DOCS / "results" / "slice-gates.md")[
        f"scoregate run feeds --no-cache --fail-on-gates -C {DEMO}"
    ]

    assert lines and in_order(lines, [line.strip() for line in shown]) == [], lines


def test_the_slice_field_error_on_the_page_is_what_scoregate_prints(tmp_path: Path) -> None:
    page = read(DOCS / "results" / "slice-gates.md")
    command = "$ scoregate run feeds -C /tmp/slices-demo"
    (block,) = [body for kind, body in FENCE.findall(page) if kind == "text" and body.startswith(command)]
    demo = tmp_path / "slices-demo"
    shutil.copytree(REPO / DEMO, demo, ignore=shutil.ignore_patterns("runs"))
    config = demo / "scoregate.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("[feed_category,", "[feed_categroy,"), "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "ANTHROPIC_"))}

    done = subprocess.run(
        [str(SCOREGATE_BIN), "run", "feeds", "-C", str(demo)], env={**env, "COLUMNS": "80"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    printed = " ".join((done.stdout + done.stderr).replace(str(demo), "/tmp/slices-demo").split())
    assert done.returncode == 1 and "no run was started" in printed, printed
    assert printed == " ".join(block.removeprefix(command).split())


def test_the_flaky_page_names_the_item_its_transcript_shows_breaking_the_cap_in_the_runs_record() -> None:
    page = DOCS / "running" / "flaky-items.md"
    (named,) = re.findall(r"`([\w-]+)` happened to break the cap in repeat 1", " ".join(read(page).split()))
    history = transcripts(page)[f"scoregate items flaky digest -C {DEMO}"]
    first = {line.split()[0]: history[i + 1] for i, line in enumerate(history) if "gate tldr_caps_met" in line}

    assert [item for item, record in first.items() if " fail (0) " in record] == [named], first
