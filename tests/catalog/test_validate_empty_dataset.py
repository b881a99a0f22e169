"""`scoregate validate` does not call an experiment on an empty dataset ok (`run` stops on it): it names the file
and what to do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.projects import CliResult


def test_validate_names_an_experiment_whose_dataset_is_empty_and_what_to_do(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Callable[[Path, Callable[[Any], None]], None]
) -> None:
    empty = project_dir / "datasets" / "empty_v1.jsonl"
    empty.write_text("", encoding="utf-8")

    def on_empty(config: Any) -> None:
        config["experiments"]["fresh"] = {**config["experiments"]["counters"], "dataset": "empty_v1", "gates": []}

    edit_yaml(project_dir / "scoregate.yaml", on_empty)

    checked = scoregate("validate")
    ran = scoregate("run", "fresh", "--no-mlflow")

    assert ran.code == 1 and "the dataset is empty" in ran.output
    said = " ".join(checked.output.split())
    assert "ok experiment fresh" not in said, checked.output
    assert f"empty experiment fresh: {empty} has no items: `scoregate run fresh` stops on it" in said, checked.output
    assert "add items to it" in said
    assert "ok experiment counters:" in said  # the rest of the project is still checked
