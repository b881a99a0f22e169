"""YAML files are read with bounds: an alias bomb, an alias loop and deep nesting are refused at once, naming the
file, before anything is built. The real executable refusing a bomb or an oversized file in bounded memory is in
tests/e2e/test_yaml_bounds_processes.py."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest
import yaml

from scoregate.catalog import yaml_files
from support.yaml_bombs import billion_laughs

"""Address space the child may use, so the test itself cannot exhaust the machine when the bound is missing."""


def test_an_alias_bomb_is_caught_before_anything_is_built(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(billion_laughs(""), encoding="utf-8")
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    data, problems = yaml_files.read_yaml(path)

    assert data is None and len(problems) == 1
    assert problems[0].startswith(f"{path}: aliases (*name) expand this file by 926,177,094 values, more than")
    assert time.monotonic() - started < 10.0  # expanding it would take hours; generous for a loaded machine
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024  # KB: nothing was expanded


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: &x [1, *x]\n", ":1: an alias (*name) refers to a value that contains it (a loop)"),
        ("a: " + "[" * 300 + "]" * 300 + "\n", ":1: values nest more than 200 levels deep"),
    ],
)
def test_an_alias_loop_and_deep_nesting_are_named_by_file_and_line(
    project_dir: Path, text: str, words: str
) -> None:  # fmt: skip
    path = project_dir / "datasets" / "smoke_v1.yaml"
    path.write_text(text, encoding="utf-8")

    data, problems = yaml_files.read_yaml(path)

    assert data is None and len(problems) == 1 and problems[0].startswith(f"{path}{words}"), problems


def test_yaml_is_parsed_by_libyaml_where_it_is_installed() -> None:
    assert yaml.__with_libyaml__  # `make setup` installs PyYAML's wheel, which bundles it
    assert issubclass(yaml_files._UniqueKeyLoader, yaml.CSafeLoader)


def test_shared_values_through_aliases_still_work(project_dir: Path) -> None:
    path = project_dir / "datasets" / "smoke_v1.yaml"
    path.write_text("metadata: &m {owner: team, tags: [a, b]}\ndescription: shared\ninput_schema: null\n", "utf-8")

    data, problems = yaml_files.read_yaml(path)

    assert problems == [] and data["metadata"] == {"owner": "team", "tags": ["a", "b"]}
