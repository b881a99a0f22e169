"""Numbers are computed before they are mirrored: `analysis/` imports no provider, model call, engine, outside
system, sink or use case, and opens no run, loads no project, reads or writes no file; the CLI reaches the rest
through the use-case facade (`scoregate.app`); the run store imports only `errors` and `support`, outside systems
import no use case, and the root package holds only `__init__` and `errors`."""

from __future__ import annotations

import ast
from pathlib import Path

import scoregate
from support.layering_rules import imported_modules

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


def test_analysis_depends_on_neither_providers_nor_sinks() -> None:
    offending = {
        f"{path.name}: {name}"
        for path in sorted(ANALYSIS.glob("*.py"))
        for name in imported_modules(path)
        if name.startswith(FORBIDDEN)
    }
    assert offending == set()
    assert (ANALYSIS / "compare_runs.py").is_file() and not (ANALYSIS / "preference.py").exists()


SRC = Path(scoregate.__file__).parent


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module a relative `from . import x` names, read from the file's place in the package."""
    parts = path.relative_to(SRC.parent).with_suffix("").parts  # a package's __init__ counts as its first module
    base = parts[: len(parts) - node.level]
    return ".".join([*base, *([node.module] if node.module else [])])


def scoregate_imports(path: Path) -> list[str]:
    """Every scoregate module a file imports: at the top, in functions, under TYPE_CHECKING, relative or not."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.append(_absolute(path, node) if node.level else node.module or "")
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [name for name in names if name == "scoregate" or name.startswith("scoregate.")]


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


CLI_MAY_IMPORT = ("scoregate.app", "scoregate.errors", "scoregate.cli", "scoregate.support", "scoregate.store.record")
"""The facade, the errors, the CLI itself, the helpers with no domain and the run record's types."""


def _cli_imports_outside_type_checking(path: Path) -> list[str]:
    """The scoregate modules a CLI file imports where the import runs (not under `TYPE_CHECKING`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            typed |= {id(sub) for stmt in node.body for sub in ast.walk(stmt)}
    return [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and id(node) not in typed and not node.level
    ]


def test_the_cli_imports_only_the_facade_errors_support_the_record_types_and_itself() -> None:
    offending = {
        f"cli/{path.name}: {name}"
        for path in sorted((SRC / "cli").rglob("*.py"))
        for name in scoregate_imports(path)
        if name != "scoregate" and not _within(name, CLI_MAY_IMPORT)
    }
    assert offending == set()


def test_the_cli_names_a_use_case_module_only_for_a_type_in_annotations() -> None:
    """A result type the CLI names only in annotations comes from the use case's module under `TYPE_CHECKING`
    (it loads nothing); whatever the CLI calls comes through the facade."""
    offending = {
        f"cli/{path.name}: {name}"
        for path in sorted((SRC / "cli").rglob("*.py"))
        for name in _cli_imports_outside_type_checking(path)
        if name.startswith("scoregate.app.")
    }
    assert offending == set()


def test_the_type_only_rule_sees_an_import_that_runs(tmp_path: Path) -> None:
    module = tmp_path / "cmd.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from scoregate.app.forecast import RunForecast\n"
        "def f():\n    from scoregate.app.runs import StoredRuns\n",
        encoding="utf-8",
    )
    assert [m for m in _cli_imports_outside_type_checking(module) if m.startswith("scoregate")] == [
        "scoregate.app.runs"
    ]


def test_a_track_cli_imports_nothing_of_the_cli_or_the_use_cases() -> None:
    offending = {
        f"tracks/{path.parent.name}/cli.py: {name}"
        for path in sorted(SRC.glob("tracks/*/cli.py"))
        for name in scoregate_imports(path)
        if _within(name, ("scoregate.cli", "scoregate.app"))
    }
    assert offending == set()


def test_analysis_opens_no_run_loads_no_project_and_writes_no_file() -> None:
    never = ("scoregate.store.run_store", "scoregate.catalog.project", "scoregate.support.files")
    offending = {
        f"analysis/{path.name}: {name}"
        for path in sorted(ANALYSIS.rglob("*.py"))
        for name in scoregate_imports(path)
        if _within(name, never)
    }
    assert offending == set()


def test_store_imports_only_errors_and_support() -> None:
    offending = {
        f"store/{path.name}: {name}"
        for path in sorted((SRC / "store").rglob("*.py"))
        for name in scoregate_imports(path)
        if not _within(name, ("scoregate.errors", "scoregate.support", "scoregate.store"))
    }
    assert offending == set()


def test_outside_systems_import_no_use_case() -> None:
    offending = {
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / "integrations").rglob("*.py"))
        for name in scoregate_imports(path)
        if _within(name, ("scoregate.app",))
    }
    assert offending == set()


FILE_MODULES = ("pathlib", "os", "shutil", "tempfile", "csv", "io", "glob", "sqlite3")


def test_analysis_reads_and_writes_no_file_itself() -> None:
    offending = set()
    for path in sorted(ANALYSIS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                offending.add(f"analysis/{path.name}:{node.lineno}: open()")
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            modules += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            offending |= {
                f"analysis/{path.name}:{node.lineno}: {module}"
                for module in modules
                if module.split(".")[0] in FILE_MODULES
            }
    assert offending == set()


def test_the_root_package_holds_only_init_errors_and_folders() -> None:
    assert sorted(path.name for path in SRC.glob("*.py")) == ["__init__.py", "errors.py"]


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
