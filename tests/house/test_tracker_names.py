"""The use cases and the CLI name a tracker only where an alias or a command is spelled (issue 27, sinks by ability)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "scoregate"
TRACKERS = {"mlflow", "langfuse"}
ALIASES = {
    "app/run/option_groups.py": "`--no-mlflow` and `--no-langfuse`, aliases of `--no-mirror NAME`",
    "cli/mirror_flags.py": "the same two switches, read from the command line",
    "cli/sync_cmd.py": "`mlflow-sync` and `langfuse-sync`, aliases of `sync RUN --to NAME`",
    "cli/commands.py": "the `scoregate langfuse` command group's name",
}


def _tracker_literals(path: Path) -> list[int]:
    """The lines of `path` with a string literal that is exactly a tracker's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TRACKERS
    ]


def test_the_app_and_the_cli_name_a_tracker_only_in_its_aliases() -> None:
    named = {
        str(path.relative_to(SRC)): lines
        for room in ("app", "cli")
        for path in sorted((SRC / room).rglob("*.py"))
        if (lines := _tracker_literals(path))
    }

    assert sorted(named) == sorted(ALIASES), {k: v for k, v in named.items() if k not in ALIASES}


def test_a_tracker_named_outside_the_aliases_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "use_case.py"
    module.write_text('def f(sinks):\n    return sinks["mlflow"]\n', encoding="utf-8")

    assert _tracker_literals(module) == [2]
