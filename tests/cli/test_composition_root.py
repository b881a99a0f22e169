"""A new command is three files (its module, its use case, its test) and one line in the composition root's table,
`BUILT_IN` in `cli/commands.py`: the throwaway `hello` command, added by that one line, is in `--help` and runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from scoregate.cli import app
from scoregate.cli import commands as composition
from scoregate.cli.lazy_group import LazyCommand

HELLO = '''
import typer


def hello(name: str = "you") -> None:
    """Say hello from a command added by one line."""
    typer.echo(f"hello {name}")
'''


@pytest.fixture
def hello_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's module on the path, and its one line in the table, for this test only."""
    (tmp_path / "hello_cmd.py").write_text(HELLO, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    line = LazyCommand("hello_cmd", "hello", "Say hello from a command added by one line.")
    monkeypatch.setitem(composition.BUILT_IN, "hello", line)


def test_a_command_added_by_one_line_is_in_help_and_runs(hello_line: None) -> None:
    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})
    said = CliRunner().invoke(app, ["hello", "--name", "Ada"])

    assert shown.exit_code == 0, shown.output
    assert "Say hello from a command added by one line." in shown.output
    assert [line.split()[0] for line in shown.output.splitlines() if line.startswith("  hello ")] == ["hello"]
    assert (said.exit_code, said.output) == (0, "hello Ada\n")


def test_without_its_line_the_command_is_unknown() -> None:
    said = CliRunner().invoke(app, ["hello"])

    assert said.exit_code == 2 and "No such command 'hello'" in said.output


def test_the_composition_root_says_what_it_is() -> None:
    doc = composition.__doc__ or ""

    assert doc.startswith("The composition root of the `scoregate` command")
    assert list(composition.COMMANDS)[:2] == ["validate", "run"]
