"""The use-case facade (`scoregate.app`): every name the CLI needs, typed for mypy, loaded only when first used."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import scoregate.app as facade

FACADE_FILE = Path(facade.__file__)


def _type_checking_names() -> set[str]:
    """The names the facade imports under `if TYPE_CHECKING:` (what mypy sees for each lazy name)."""
    tree = ast.parse(FACADE_FILE.read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name
        for node in ast.walk(block)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_every_exported_name_is_typed_and_has_a_home() -> None:
    homes = {name for names in facade._HOMES.values() for name in names}

    assert len(facade.__all__) == len(set(facade.__all__))
    assert set(facade.__all__) == homes == _type_checking_names()


@pytest.mark.parametrize("name", facade.__all__)
def test_a_name_loads_the_object_its_module_defines(name: str) -> None:
    home = next(module for module, names in facade._HOMES.items() if name in names)

    assert getattr(facade, name) is getattr(importlib.import_module(home), name)


def test_no_exported_name_is_shadowed_by_a_module_of_the_package() -> None:
    modules = {info.name for info in pkgutil.iter_modules(facade.__path__)}

    assert modules & set(facade.__all__) == set()


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'compare_runs'"):
        facade.compare_runs  # noqa: B018


def test_importing_the_facade_loads_no_use_case_and_no_lower_layer() -> None:
    probe = "import json, sys, scoregate.app; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    loaded = {m for m in json.loads(done.stdout) if m.startswith("scoregate")}

    assert loaded == {"scoregate", "scoregate.app"}
