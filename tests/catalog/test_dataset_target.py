"""Where a dataset may be written: a new or JSON-lines `.jsonl`, beside a new `.yaml` or a dataset card."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoregate.catalog.dataset_target import check_dataset_target
from scoregate.errors import ScoregateError


def test_a_new_file_an_old_dataset_and_its_card_may_be_written(tmp_path: Path) -> None:
    check_dataset_target(tmp_path / "new.jsonl")
    (tmp_path / "old.jsonl").write_text('{"id": "a", "input": {}}\n', encoding="utf-8")
    (tmp_path / "old.yaml").write_text("description: calls\nmetadata: {task: tags}\n", encoding="utf-8")
    check_dataset_target(tmp_path / "old.jsonl")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("", encoding="utf-8")
    check_dataset_target(tmp_path / "empty.jsonl")


@pytest.mark.parametrize(
    ("name", "files", "refused", "said"),
    [
        pytest.param("README.md", {"README.md": "# notes\n"}, "README.md", "ends in .jsonl", id="not jsonl"),
        pytest.param("notes.jsonl", {"notes.jsonl": "my notes\n"}, "notes.jsonl", "not a dataset", id="not json"),
        pytest.param(
            "scoregate.jsonl",
            {"scoregate.yaml": "experiments: {}\nsettings: {model: local}\n"},
            "scoregate.yaml",
            "not a dataset card (it has experiments, settings)",
            id="the project's config beside it",
        ),
        pytest.param("x.jsonl", {"x.yaml": "- a list\n"}, "x.yaml", "not a dataset card", id="card not a mapping"),
        pytest.param("y.jsonl", {"y.yaml": "a: [\n"}, "y.yaml", "not a dataset card", id="card not yaml"),
    ],
)
def test_someone_elses_file_is_refused_by_name_and_left_as_it_was(
    tmp_path: Path, name: str, files: dict[str, str], refused: str, said: str
) -> None:
    for file, text in files.items():
        (tmp_path / file).write_text(text, encoding="utf-8")

    with pytest.raises(ScoregateError) as caught:
        check_dataset_target(tmp_path / name)

    assert caught.value.where == str(tmp_path / refused)
    assert said in caught.value.render()
    assert {f: (tmp_path / f).read_text(encoding="utf-8") for f in files} == files
