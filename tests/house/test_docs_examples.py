"""The flaky-items and slice-gates pages' transcripts: each shows a line to check, the README quotes the slice-gates
one, and the slice field error and the flaky item shown are what scoregate prints and records. Every command of
the pages run on the shipped demo is in tests/e2e/test_docs_examples_run.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from support.demo_transcripts import DEMO, in_order, transcripts, unchecked
from support.markdown_docs import DOCS, FENCE, REPO, read
from support.projects import SCOREGATE_BIN


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
