"""Rule files (`rules/*.yaml`) read strictly, each problem naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.catalog.judge_rules import read_rules
from scoregate.errors import ValidationFailed


def test_a_rule_file_reads_into_its_spec(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "prod.yaml").write_text("name: prod\njudges: [j]\nsampling: 0.25\nfilter: {tags: [a]}\n")

    rules = read_rules(tmp_path)

    assert (rules["prod"].sampling, rules["prod"].filter.tags, rules["prod"].enabled) == (0.25, ["a"], True)


def test_no_rules_directory_is_no_rules(tmp_path: Path) -> None:
    assert read_rules(tmp_path) == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: prod\njudges: [j]\nsampling: 2\n", "sampling"),
        ("name: prod\njudges: [j]\nfilter: {trace: [x]}\n", "filter.trace"),
        ("name: prod\njudges: []\n", "judges"),
        ("name: other\njudges: [j]\n", "differs from the file name"),
    ],
)
def test_a_bad_rule_file_names_the_file_and_the_field(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "prod.yaml").write_text(text)

    with pytest.raises(ValidationFailed) as bad:
        read_rules(tmp_path)

    (problem,) = bad.value.problems
    assert "prod.yaml" in problem and says in problem
