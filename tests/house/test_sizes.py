"""Small modules with one job: none over 400 lines, and no public name defined in two modules."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "scoregate"
MOST_LINES = 400


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): count
        for path in _modules()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert long == {}


def test_no_public_name_is_defined_in_two_modules() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if defines and not node.name.startswith("_"):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert twice == {}
