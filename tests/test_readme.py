"""The README tells the truth: its scoregate.yaml is the shipped one, and its commands parse as shown."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from scoregate.catalog.models import ProjectConfig
from scoregate.cli import app

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(*kinds: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README) if kind in kinds]


def _commands(program: str) -> list[list[str]]:
    """Every `program ...` command line of the README's shell blocks, continuations joined, comments cut."""
    out = []
    for block in _blocks("bash", "sh", "cron"):
        for line in block.replace("\\\n", " ").splitlines():
            tokens = shlex.split(line, comments=True)
            starts = [0] + [i + 1 for i, t in enumerate(tokens) if t == "&&"]
            for start in starts:
                words = list(itertools.takewhile(lambda t: t != "&&", tokens[start:]))
                while words and ("=" in words[0] and not words[0].startswith("-")):
                    words = words[1:]  # VAR=value prefixes
                if words and words[0] in (program, f".venv/bin/{program}"):
                    out.append(words[1:])
    return out


def _is_subset(excerpt: Any, shipped: Any, where: str) -> list[str]:
    """Return where the excerpt says something the shipped file does not."""
    if isinstance(excerpt, dict):
        if not isinstance(shipped, dict):
            return [where]
        problems = []
        for key, value in excerpt.items():
            if key not in shipped:
                problems.append(f"{where}.{key} (not in the shipped file)")
            else:
                problems += _is_subset(value, shipped[key], f"{where}.{key}")
        return problems
    if isinstance(excerpt, list) and excerpt and all(isinstance(x, dict) and "name" in x for x in excerpt):
        by_name = {x["name"]: x for x in shipped}
        return [p for x in excerpt for p in _is_subset(x, by_name.get(x["name"]), f"{where}[{x['name']}]")]
    return [] if excerpt == shipped else [f"{where}: README {excerpt!r} != shipped {shipped!r}"]


def test_the_readme_scoregate_yaml_is_an_excerpt_of_the_shipped_file() -> None:
    section = README[README.index("### `scoregate.yaml`") :]
    excerpt = yaml.safe_load(FENCE.search(section).group(2))  # type: ignore[union-attr]
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))

    assert _is_subset(excerpt, shipped, "scoregate.yaml") == []
    ProjectConfig.model_validate(excerpt)  # and it is a valid config on its own


def _parse(args: list[str]) -> None:
    """Parse `scoregate ARGS` as the CLI would (options, types, required arguments), without running it."""
    command: Any = typer.main.get_command(app)
    ctx = command.make_context("scoregate", list(args))
    while hasattr(command, "commands"):
        rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]
        if not rest:
            return
        name, command, sub_args = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, sub_args, parent=ctx)


COMMANDS = _commands("scoregate")


def test_the_readme_shows_scoregate_commands() -> None:
    assert len(COMMANDS) >= 25


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a)[:60] for a in COMMANDS])
def test_each_readme_command_parses(args: list[str]) -> None:
    try:
        _parse(args)
    except typer.Exit as exc:  # --version and the like finish while parsing
        assert exc.exit_code == 0


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a)[:60] for a in COMMANDS])
def test_readme_commands_use_no_path_outside_the_repository(args: list[str]) -> None:
    outside = [a for a in args if a.startswith(("../", "/")) or "/../" in a]
    assert outside == []


def test_every_make_target_the_readme_shows_exists() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", makefile, re.MULTILINE))
    shown = {words[0] for words in _commands("make") if words}
    assert shown and shown <= targets, shown - targets


def test_a_keyless_readme_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`scoregate extraction check extraction_v1`, as shown: a dataset name, from the repository root."""
    from scoregate.cli import main

    assert ["extraction", "check", "extraction_v1"] in COMMANDS
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("sys.argv", ["scoregate", "extraction", "check", "extraction_v1"])
    main()
    assert "56 of 56 items can be scored" in " ".join(capsys.readouterr().out.split())
