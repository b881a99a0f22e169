"""The CLI starts without importing the heavy libraries: they load only in the commands that use them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

HEAVY = ("openai", "anthropic", "scipy", "pandas", "mlflow", "langfuse")
_TRACK_CLI = re.compile(r"scoregate\.tracks\.\w+\.cli")


def _modules_after(code: str) -> set[str]:
    """Run `code` in a fresh interpreter; return the names in its sys.modules at the end."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _imported_after(code: str) -> dict[str, bool]:
    """Run `code` in a fresh interpreter; return which heavy top-level packages ended up in sys.modules."""
    modules = _modules_after(code)
    return {m: m in modules for m in HEAVY}


def _cli_code(args: list[str]) -> str:
    """Python source that runs `scoregate ARGS` through `scoregate.cli.main` and expects success."""
    return "\n".join(
        [
            "import sys",
            f"sys.argv = ['scoregate', *{args!r}]",
            "import scoregate.cli",
            "try:",
            "    scoregate.cli.main()",
            "except SystemExit as exc:",
            "    assert exc.code in (0, None), exc.code",
        ]
    )


def _command_modules(modules: set[str]) -> set[str]:
    """The command modules among `modules`: `scoregate.cli.*_cmd` and each track's `scoregate.tracks.<track>.cli`."""
    return {m for m in modules if (m.startswith("scoregate.cli.") and m.endswith("_cmd")) or _TRACK_CLI.fullmatch(m)}


def test_importing_the_cli_imports_no_heavy_library() -> None:
    assert _imported_after("import scoregate.cli") == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["compare", "--help"]])
def test_help_and_version_import_no_heavy_library(args: list[str]) -> None:
    assert _imported_after(_cli_code(args)) == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_no_command_module(args: list[str]) -> None:
    assert _command_modules(_modules_after(_cli_code(args))) == set()


def test_a_command_imports_its_own_module_only() -> None:
    loaded = _command_modules(_modules_after(_cli_code(["runs", "--help"])))
    assert loaded == {"scoregate.cli.runs_cmd", "scoregate.cli.invalidate_cmd", "scoregate.cli.watch_cmd"}


@pytest.mark.parametrize(
    ("command", "module"), [("extraction", "scoregate.tracks.extraction.cli"), ("gold", "scoregate.tracks.tags.cli")]
)
def test_a_track_command_imports_its_own_module_only(command: str, module: str) -> None:
    assert _command_modules(_modules_after(_cli_code([command, "--help"]))) == {module}


def test_the_registry_matches_every_command() -> None:
    """Root help shows the registry's one-line helps: each must be its command's own, under its own name."""
    from scoregate.cli.commands import COMMANDS, app

    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    assert group.list_commands(ctx) == list(COMMANDS)
    for name, entry in COMMANDS.entries().items():
        command = group.get_command(ctx, name)
        assert command is not None and command.name == name
        assert entry.help == command.get_short_help_str(limit=sys.maxsize), name


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [(["rn"], "Did you mean 'run', 'runs', 'rank'?"), (["runs", "lst"], "Did you mean 'list'?")],
)
def test_a_typo_suggests_the_command_meant(args: list[str], suggestion: str) -> None:
    from scoregate.cli import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"No such command '{args[-1]}'. {suggestion}" in result.output


@pytest.mark.parametrize(
    ("words", "names"),
    [("scoregate ru", ["run", "runs"]), ("scoregate runs ", ["list", "show", "invalidate", "watch"])],
)
def test_shell_completion_lists_command_names_with_their_help(words: str, names: list[str]) -> None:
    from scoregate.cli.commands import COMMANDS

    env = {**os.environ, "_SCOREGATE_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": words}
    code = "import sys\nsys.argv = ['scoregate']\nfrom scoregate.cli import main\nmain()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.findall(r'"([a-z-]+)":', done.stdout) == names
    if words == "scoregate ru":
        assert COMMANDS["runs"].help in done.stdout


def test_the_run_module_imports_neither_the_openai_sdk_nor_scipy_before_the_items() -> None:
    """A run needs scipy only for the summary after its last item, and never the openai SDK (plain HTTP)."""
    imported = _imported_after("import scoregate.app.run.experiment, scoregate.providers.registry")
    assert imported["openai"] is False and imported["scipy"] is False


def test_the_command_leaves_what_it_loaded_to_the_system_at_exit() -> None:
    """At exit the interpreter collects every object still alive, the loaded libraries' included (~0.15 s after a
    run); the command freezes them first, so that collection is skipped and the process ends at once."""
    code = "\n".join(
        [
            "import atexit, gc",
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))",  # runs after main's
            _cli_code(["--version"]),
        ]
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "frozen at exit: True"
