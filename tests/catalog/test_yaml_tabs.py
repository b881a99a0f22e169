"""A YAML file indented with a tab (YAML allows spaces only) is named with its line and told what to change, not
left with the parser's "found character that cannot start any token"."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.catalog.yaml_files import read_yaml


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: r\njudges:\n\t- ev_actionability_v1\n", 3),
        ("name: r\nfilter:\n  trace_name: [a]\n\tenvironment: [b]\n", 4),
    ],
)
def test_a_tab_that_indents_a_line_is_named_with_the_fix(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(text, encoding="utf-8")
    data, problems = read_yaml(path)
    assert data is None
    assert problems == [f"{path}:{line}: a tab indents this line; YAML indents with spaces: replace the tab"]


def test_a_tab_inside_a_value_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text('name: r\ndescription: "a\\tb"\nnote: a\tb\n', encoding="utf-8")
    assert read_yaml(path) == ({"name": "r", "description": "a\tb", "note": "a\tb"}, [])
