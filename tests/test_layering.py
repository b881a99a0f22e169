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


def _module_file(module: str) -> Path | None:
    """The source file of a scoregate module (a package's `__init__.py`), or None for a name inside a module."""
    path = Path(scoregate.__file__).parent.joinpath(*module.split(".")[1:])
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_the_catalog_reaches_no_evaluator_kind_or_track_at_any_distance() -> None:
    """A file format does not know the code that scores with it: the kinds are passed to the catalog."""
    start = [f"scoregate.catalog.{p.stem}" for p in sorted((ANALYSIS.parent / "catalog").glob("*.py"))]
    seen: dict[str, str] = {m: m for m in start}
    todo = list(start)
    while todo:
        module = todo.pop()
        path = _module_file(module)
        for name in imported_modules(path) if path is not None else []:
            if name.startswith("scoregate.") and name not in seen:
                seen[name] = f"{seen[module]} -> {name}"
                todo.append(name)
    kinds_and_tracks = ("scoregate.scoring", "scoregate.tracks")
    reached = sorted(chain for name, chain in seen.items() if name.startswith(kinds_and_tracks))
    assert reached == []
    assert "scoregate.catalog.evaluators" in seen and "scoregate.support.suggest" in seen  # the walk follows imports
