"""No module imports itself back: every import of src/scoregate (top level, inside a function, under TYPE_CHECKING,
relative, or named in a string for a lazy import) draws an arrow, and no arrows close a circle. The use cases
(`app/`) have none; the circles still left elsewhere are listed by their modules, and the list only shrinks."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.layering_rules import module_cycles, own_arrows

SOURCE_ROOT = Path(__file__).resolve().parents[2] / "src"

KNOWN_CIRCLES = {
    # each a spec module that builds its evaluator lazily, and the evaluator that imports the spec back
    ("scoregate.scoring.counters", "scoregate.scoring.kinds.counters"),
    ("scoregate.scoring.custom", "scoregate.scoring.kinds.custom"),
    ("scoregate.scoring.facts", "scoregate.scoring.kinds.fact_recall"),
    ("scoregate.scoring.judge", "scoregate.scoring.kinds.llm_judge"),
    ("scoregate.tracks.extraction.kind", "scoregate.tracks.extraction.spec"),
    ("scoregate.tracks.tags.kind", "scoregate.tracks.tags.run_summary", "scoregate.tracks.tags.spec"),
    # page reads its assets through `resources.files("scoregate.report")`, the package whose __init__ imports it
    ("scoregate.report", "scoregate.report.page", "scoregate.report.write"),
}
"""Circles outside the use cases that are not broken yet. A new circle fails; so does a listed one that is gone."""


def _circles(source_root: Path) -> dict[tuple[str, ...], str]:
    found = {}
    for line in module_cycles(own_arrows(source_root)):
        modules = tuple(sorted({part.split(" -> ")[1] for part in line.split(": ", 1)[1].split("; ")}))
        found[modules] = line
    return found


def test_no_use_case_module_imports_itself_back() -> None:
    circles = _circles(SOURCE_ROOT)
    assert [line for modules, line in circles.items() if any(m.startswith("scoregate.app") for m in modules)] == []


def test_no_module_circle_beyond_the_known_ones() -> None:
    circles = _circles(SOURCE_ROOT)
    assert [line for modules, line in circles.items() if modules not in KNOWN_CIRCLES] == []
    assert sorted(KNOWN_CIRCLES - set(circles)) == [], "a listed circle is broken: take it off KNOWN_CIRCLES"


# The checker itself, on small trees.


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "src"
    (root / "scoregate" / "app").mkdir(parents=True)
    (root / "scoregate" / "__init__.py").write_text("")
    (root / "scoregate" / "app" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / "scoregate" / name).write_text(textwrap.dedent(text))
    return root


def test_the_checker_passes_imports_that_point_one_way(tmp_path: Path) -> None:
    files = {"app/a.py": "from scoregate.app import b\n", "app/b.py": "def f():\n    import scoregate.app.c\n"}
    files["app/c.py"] = ""
    assert _circles(_tree(tmp_path, files)) == {}


@pytest.mark.parametrize(
    "files",
    [
        {"app/a.py": "from scoregate.app.b import x\n", "app/b.py": "from scoregate.app.a import y\n"},
        {"app/a.py": "from scoregate.app import b\n", "app/b.py": "def f():\n    from scoregate.app.a import y\n"},
        {"app/a.py": "from . import b\n", "app/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import y"},
        {"app/a.py": "import scoregate.app.b\n", "app/b.py": 'LAZY = "scoregate.app.a:run"\n'},
    ],
    ids=["top-level", "in-a-function", "type-checking-relative", "lazy-string"],
)
def test_the_checker_finds_a_circle_of_two(tmp_path: Path, files: dict[str, str]) -> None:
    assert list(_circles(_tree(tmp_path, files))) == [("scoregate.app.a", "scoregate.app.b")]


def test_the_checker_finds_a_circle_of_three_and_names_its_lines(tmp_path: Path) -> None:
    files = {
        "app/a.py": "from scoregate.app import b\n",
        "app/b.py": "\n\nfrom scoregate.app import c\n",
        "app/c.py": "def f():\n    from scoregate.app import a\n",
    }
    (line,) = _circles(_tree(tmp_path, files)).values()
    assert line.startswith("3 modules in a circle: ")
    assert "scoregate.app.b:3 -> scoregate.app.c" in line and "scoregate.app.c:2 -> scoregate.app.a" in line
