"""`gold build --out`: a dataset is never written over the project's config or another file (hostile paths)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from support.projects import CliResult

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "datasets" / "support_calls_v1"


def test_gold_build_refuses_to_write_its_card_over_the_projects_config(
    project_dir: Path, scoregate: Callable[..., CliResult]
) -> None:
    shutil.copytree(FOLDER, project_dir / "support_calls_v1")
    config = (project_dir / "scoregate.yaml").read_bytes()

    result = scoregate("gold", "build", "support_calls_v1", "--out", "scoregate.jsonl")

    assert result.code == 1, result.output
    assert f"{project_dir / 'scoregate.yaml'}: exists and is not a dataset card" in result.output, result.output
    assert (project_dir / "scoregate.yaml").read_bytes() == config
    assert not (project_dir / "scoregate.jsonl").exists()


def test_gold_build_refuses_a_file_that_is_not_a_dataset(
    project_dir: Path, scoregate: Callable[..., CliResult]
) -> None:
    shutil.copytree(FOLDER, project_dir / "support_calls_v1")
    (project_dir / "README.md").write_text("# our notes\n", encoding="utf-8")

    result = scoregate("gold", "build", "support_calls_v1", "--out", "README.md")

    assert result.code == 1, result.output
    assert "a dataset file ends in .jsonl" in result.output and "name it README.jsonl" in result.output, result.output
    assert (project_dir / "README.md").read_text(encoding="utf-8") == "# our notes\n"
    assert not (project_dir / "README.yaml").exists()
