"""The use-case facade (`scoregate.app`): every name the CLI needs, typed for mypy, loaded only when first used."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import scoregate.app as facade

FACADE_FILE = Path(facade.__file__)
STUB_FILE = FACADE_FILE.with_suffix(".pyi")
REPO = Path(__file__).resolve().parents[2]
Homes = dict[str, tuple[str, ...]]


def _stub_tool() -> ModuleType:
    """tools/facade_stub.py, which writes the type checker's view of the facade from its table (a script)."""
    spec = importlib.util.spec_from_file_location("facade_stub", REPO / "tools" / "facade_stub.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stub_names(text: str) -> set[str]:
    """The names a stub imports (what mypy sees for each lazy name)."""
    return {
        alias.asname or alias.name
        for node in ast.parse(text).body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_every_exported_name_is_typed_and_has_a_home() -> None:
    homes = {name for names in facade._HOMES.values() for name in names}

    assert len(facade.__all__) == len(set(facade.__all__))
    assert set(facade.__all__) == homes == _stub_names(STUB_FILE.read_text(encoding="utf-8"))


def test_the_type_checkers_view_is_the_one_generated_from_the_table() -> None:
    written = STUB_FILE.read_text(encoding="utf-8")

    assert written == _stub_tool().render(facade._HOMES), "run `make facade-stub` to regenerate app/__init__.pyi"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda homes: {**homes, "scoregate.app.merge": ("merge_run", "merge_plan")}, id="name added"),
        pytest.param(lambda homes: {m: n for m, n in homes.items() if m != "scoregate.report.write"}, id="removed"),
    ],
)
def test_a_table_the_stub_was_not_generated_from_is_caught(change: Callable[[Homes], Homes]) -> None:
    written = STUB_FILE.read_text(encoding="utf-8")

    assert written != _stub_tool().render(change(facade._HOMES))


def test_each_name_is_spelled_once_in_the_facade_source() -> None:
    source = FACADE_FILE.read_text(encoding="utf-8")

    assert {name: source.count(f'"{name}"') for name in facade.__all__} == dict.fromkeys(facade.__all__, 1)


@pytest.mark.parametrize("name", facade.__all__)
def test_a_name_loads_the_object_its_module_defines(name: str) -> None:
    home = next(module for module, names in facade._HOMES.items() if name in names)

    assert getattr(facade, name) is getattr(importlib.import_module(home), name)


def test_no_exported_name_is_shadowed_by_a_module_of_the_package() -> None:
    modules = {info.name for info in pkgutil.iter_modules(facade.__path__)}

    assert modules & set(facade.__all__) == set()


def test_the_cli_calls_no_outside_system_itself() -> None:
    """What the facade hands the CLI from `integrations/` is a result type to print, never a function to call: the
    Langfuse connection check, score import and annotation are use cases in `app/`."""
    calls = sorted(
        name
        for module, names in facade._HOMES.items()
        if module.startswith("scoregate.integrations.")
        for name in names
        if not isinstance(getattr(facade, name), type)
    )

    assert calls == []


def test_the_facade_holds_few_names_and_passes_through_none_the_cli_may_import_itself() -> None:
    passed = {
        name for module, names in facade._HOMES.items() for name in names if not module.startswith("scoregate.app")
    }
    itself = ("scoregate.support", "scoregate.store.record")

    assert [name for name in passed if facade._HOME_OF[name].startswith(itself)] == []
    assert len(facade.__all__) <= 52  # a use case per command, or one object per family of them (`StoredRuns`)
    assert len(passed) <= 3  # report_runs, find_root, reason_lines


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'compare_runs'"):
        facade.compare_runs  # noqa: B018


def test_importing_the_facade_loads_no_use_case_and_no_lower_layer() -> None:
    probe = "import json, sys, scoregate.app; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    loaded = {m for m in json.loads(done.stdout) if m.startswith("scoregate")}

    assert loaded == {"scoregate", "scoregate.app"}
