"""Numbers are computed before they are mirrored: `analysis/` imports no provider, model call, engine, outside
system, sink or use case."""

from __future__ import annotations

import ast
from pathlib import Path

import scoregate

ANALYSIS = Path(scoregate.__file__).parent / "analysis"
FORBIDDEN = (
    "scoregate.providers",
    "scoregate.calls",
    "scoregate.engine",
    "scoregate.integrations",
    "scoregate.sinks",
    "scoregate.app",
    "scoregate.scoring.preference",
)


def imported_modules(path: Path) -> list[str]:
    """Every module a file imports, at the top or inside a function."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def test_analysis_depends_on_neither_providers_nor_sinks() -> None:
    offending = {
        f"{path.name}: {name}"
        for path in sorted(ANALYSIS.glob("*.py"))
        for name in imported_modules(path)
        if name.startswith(FORBIDDEN)
    }
    assert offending == set()
    assert (ANALYSIS / "compare_runs.py").is_file() and not (ANALYSIS / "preference.py").exists()
