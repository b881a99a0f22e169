"""Where a dataset may be written (`gold build`, `extraction import-*`): never over someone else's file."""

from __future__ import annotations

from pathlib import Path

from scoregate.catalog.models import DatasetMeta
from scoregate.catalog.yaml_files import read_yaml
from scoregate.errors import ScoregateError
from scoregate.support.files import check_writable_path, refuse_foreign_file


def check_dataset_target(path: Path) -> None:
    """Raise a ScoregateError, before anything is written, unless `path` can take a dataset: a `.jsonl` file that is
    new, empty or JSON lines, beside a `.yaml` that is new or a dataset card (never the project's scoregate.yaml)."""
    check_writable_path(path)
    if path.suffix != ".jsonl":
        raise ScoregateError(
            "a dataset file ends in .jsonl (its card is the .yaml beside it)",
            where=str(path),
            hint=f"name it {path.with_suffix('.jsonl').name}",
        )
    refuse_foreign_file(path, "{", "a dataset (JSON lines)", hint="name a new .jsonl file, or move this one away")
    card = path.with_suffix(".yaml")
    if not card.is_file():
        return
    data, problems = read_yaml(card)
    unknown = sorted(set(data) - set(DatasetMeta.model_fields)) if isinstance(data, dict) else []
    if not problems and (data is None or (isinstance(data, dict) and not unknown)):
        return
    shown = f" (it has {', '.join(map(str, unknown[:3]))})" if unknown else ""
    raise ScoregateError(
        f"exists and is not a dataset card{shown}, so it is not replaced",
        where=str(card),
        hint=f"the dataset's card is written beside it as {card.name}: name the dataset file differently",
    )
