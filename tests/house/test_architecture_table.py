"""The whiteboard is a test: every import of src/scoregate follows the layers and nevers of docs/architecture.md
(tests/house/test_layering.py adds the rules the table cannot say: the CLI through the facade, analysis without
files)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.layering_rules import (
    broken_nevers,
    own_arrows,
    package_cycles,
    read_rules,
    root_modules,
    up_arrows,
)

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOT = REPO / "src"
ARCHITECTURE = REPO / "docs" / "architecture.md"


@pytest.fixture(scope="module")
def arrows() -> list:
    return own_arrows(SOURCE_ROOT)


def test_every_package_has_one_row_and_every_row_a_package() -> None:
    layers, _ = read_rules(ARCHITECTURE)
    folders = {path.name for path in (SOURCE_ROOT / "scoregate").iterdir() if (path / "__init__.py").is_file()}
    assert folders | {"errors"} == set(layers)


def test_no_import_points_up_or_sideways(arrows: list) -> None:
    """The house drawn from the imports, each module in its folder's layer, has no arrow back up."""
    layers, _ = read_rules(ARCHITECTURE)
    assert up_arrows(arrows, layers) == []


def test_no_never_is_broken_directly_or_at_any_distance(arrows: list) -> None:
    _, nevers = read_rules(ARCHITECTURE)
    assert broken_nevers(arrows, nevers) == []


def test_no_two_packages_import_each_other(arrows: list) -> None:
    assert package_cycles(arrows) == []


def test_the_root_package_holds_only_init_and_errors() -> None:
    assert root_modules(SOURCE_ROOT) == ["__init__.py", "errors.py"]


# The checker itself, on small trees that break one rule each.

RULES = """\
<!-- layers: -->

| layer | package | job | may import |
| --- | --- | --- | --- |
| 0 | `errors` | e | - |
| 1 | `support` | s | `errors` |
| 2 | `store` | st | `errors`, `support` |
| 2 | `catalog` | c | `errors`, `support` |
| 3 | `analysis` | a | lower |
| 4 | `app` | ap | lower |
| 5 | `cli` | cl | `app`, `errors` |

<!-- nevers: -->

| importer | imported | reach | why |
| --- | --- | --- | --- |
| `analysis` | `store.run_store` | at any distance | analysis is pure |
| `app` | `catalog.secret` | directly | no reason |
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "src"
    for name in ("", "support", "store", "catalog", "analysis", "app", "cli"):
        (root / "scoregate" / name).mkdir(parents=True, exist_ok=True)
        (root / "scoregate" / name / "__init__.py").write_text("")
    (root / "scoregate" / "errors.py").write_text("")
    for name, text in files.items():
        (root / "scoregate" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "scoregate" / name).write_text(textwrap.dedent(text))
    architecture = tmp_path / "architecture.md"
    architecture.write_text(RULES)
    return root, architecture


def _problems(tmp_path: Path, files: dict[str, str]) -> list[str]:
    root, architecture = _tree(tmp_path, files)
    layers, nevers = read_rules(architecture)
    arrows = own_arrows(root)
    return up_arrows(arrows, layers) + broken_nevers(arrows, nevers) + package_cycles(arrows)


def test_the_checker_passes_a_tree_that_follows_the_rules(tmp_path: Path) -> None:
    files = {
        "store/run_store.py": "from scoregate.support import x\nfrom scoregate import errors\n",
        "support/x.py": "",
        "analysis/stats.py": "from scoregate.support.x import y\n",
        "app/run.py": "from scoregate.store.run_store import RunStore\nfrom scoregate.analysis import stats\n",
        "cli/main.py": "from scoregate.app import run\n",
    }
    assert _problems(tmp_path, files) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"store/a.py": "def f():\n    from scoregate.app import run\n", "app/run.py": ""},
            "store (layer 2) may not import app",
        ),
        (
            {"store/a.py": "import typing\nif typing.TYPE_CHECKING:\n    from scoregate.analysis import b\n"},
            "store (layer 2) may not import analysis",
        ),
        ({"store/a.py": "from ..catalog import c\n", "catalog/c.py": ""}, "store (layer 2) may not import catalog"),
        ({"cli/main.py": "from scoregate.store import run_store\n", "store/run_store.py": ""}, "cli (layer 5) may not"),
        ({"store/a.py": 'TARGET = "scoregate.app.run:main"\n', "app/run.py": ""}, "store (layer 2) may not import app"),
        (
            {"analysis/track/cli.py": "from scoregate.cli import main\n", "analysis/track/__init__.py": ""},
            "analysis (layer 3) may not import cli (layer 5)",
        ),
    ],
    ids=["in-a-function", "type-checking", "relative", "cli-past-app", "lazy-string", "a-plug-in-cli-back-up"],
)
def test_the_checker_finds_each_kind_of_up_arrow(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    problems = _problems(tmp_path, files)
    assert any(expected in problem for problem in problems), problems


def test_the_checker_finds_a_never_broken_two_steps_away(tmp_path: Path) -> None:
    files = {
        "analysis/stats.py": "from scoregate.support import helper\n",
        "support/helper.py": "def f():\n    import scoregate.store.run_store\n",
        "store/run_store.py": "",
    }
    problems = _problems(tmp_path, files)
    assert any("scoregate.analysis.stats reaches scoregate.store.run_store" in p for p in problems), problems


def test_the_checker_finds_a_direct_never_and_a_package_cycle(tmp_path: Path) -> None:
    files = {
        "app/run.py": "from scoregate.catalog import secret\n",
        "catalog/secret.py": "",
        "store/a.py": "from scoregate.catalog import b\n",
        "catalog/b.py": "from scoregate.store import a\n",
    }
    problems = _problems(tmp_path, files)
    assert any("scoregate.app.run:1 -> scoregate.catalog.secret: no reason" in p for p in problems), problems
    assert "catalog <-> store" in problems


def test_the_rules_are_read_from_the_document_not_assumed(tmp_path: Path) -> None:
    root, architecture = _tree(tmp_path, {"store/a.py": "from scoregate.catalog import b\n", "catalog/b.py": ""})
    layers, _ = read_rules(architecture)
    assert up_arrows(own_arrows(root), layers)
    architecture.write_text(
        RULES.replace(
            "| 2 | `store` | st | `errors`, `support` |", "| 2 | `store` | st | `errors`, `support`, `catalog` |"
        )
    )
    layers, _ = read_rules(architecture)
    assert up_arrows(own_arrows(root), layers) == []


def test_a_row_may_allow_one_module_of_a_peer_and_no_other(tmp_path: Path) -> None:
    row = "| 2 | `catalog` | c | `errors`, `support` |"
    rules = RULES.replace(row, row.replace("`support`", "`store.words`"))
    files = {"store/words.py": "", "store/run_store.py": "", "catalog/plan.py": "from scoregate.store.words import x\n"}
    root, architecture = _tree(tmp_path, files)
    architecture.write_text(rules)
    layers, _nevers = read_rules(architecture)
    assert up_arrows(own_arrows(root), layers) == []
    (root / "scoregate" / "catalog" / "plan.py").write_text("from scoregate.store.run_store import RunStore\n")
    assert ["catalog (layer 2) may not import store" in p for p in up_arrows(own_arrows(root), layers)] == [True]
