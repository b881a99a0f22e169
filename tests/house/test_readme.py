"""The README, the front page, tells the truth: its commands parse as shown and its make targets exist."""

from __future__ import annotations

import re

import pytest
import typer

from support.markdown_docs import REPO, parse_cli, shell_commands

README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS = shell_commands(README, "scoregate")


def test_the_readme_shows_scoregate_commands() -> None:
    """The front page's tour shows commands; the manual's (tests/house/test_docs.py) show the rest."""
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a)[:60] for a in COMMANDS])
def test_each_readme_command_parses(args: list[str]) -> None:
    try:
        parse_cli(args)
    except typer.Exit as exc:  # --version and the like finish while parsing
        assert exc.exit_code == 0


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a)[:60] for a in COMMANDS])
def test_readme_commands_use_no_path_outside_the_repository(args: list[str]) -> None:
    outside = [a for a in args if a.startswith(("../", "/")) or "/../" in a]
    assert outside == []


def test_every_make_target_the_readme_shows_exists() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", makefile, re.MULTILINE))
    shown = {words[0] for words in shell_commands(README, "make") if words}
    assert shown and shown <= targets, shown - targets
