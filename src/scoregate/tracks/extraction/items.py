"""Extraction dataset items: build them, check each reference against its own schema, write a dataset.

An extraction item is a plain dataset item: `{id, input: {text, schema}, expected_output, metadata: {domain,
expected_alternatives?}}`, so the core engine runs it like any other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scoregate.catalog.dataset_target import check_dataset_target
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.models import DatasetItem
from scoregate.errors import ScoregateError
from scoregate.support.files import replace_atomically
from scoregate.tracks.extraction.kind import reference_problem
from scoregate.tracks.extraction.metrics import ExtractionOptions

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["text", "schema"],
    "properties": {
        "text": {"type": "string", "minLength": 1, "description": "The document to extract from."},
        "schema": {"type": "object", "description": "JSON Schema (Draft 7 or later) of the expected output."},
    },
}
"""The `input_schema` of an extraction dataset's metadata file: the engine checks it before any model call."""


def extraction_item(
    item_id: str,
    text: str,
    schema: Mapping[str, Any],
    expected: Any,
    *,
    domain: str | None = None,
    alternatives: Mapping[str, Sequence[Any]] | None = None,
    **metadata: Any,
) -> DatasetItem:
    """Return one extraction item in the dataset format."""
    meta: dict[str, Any] = {"domain": domain} if domain else {}
    if alternatives:
        meta["expected_alternatives"] = {path: list(values) for path, values in alternatives.items()}
    meta.update(metadata)
    return DatasetItem(
        id=item_id, input={"text": text, "schema": dict(schema)}, expected_output=expected, metadata=meta
    )


@dataclass(frozen=True, slots=True)
class ItemProblem:
    """An item that cannot be scored, and why."""

    item_id: str
    problem: str


def item_problem(item: DatasetItem, options: ExtractionOptions | None = None) -> ItemProblem | None:
    """Return the item's problem (no schema, invalid schema, no reference, reference breaking its schema)."""
    schema = item.input.get("schema")
    item_id = item.id or "?"
    if not isinstance(schema, Mapping):
        return ItemProblem(item_id, "input.schema is missing or not a JSON object")
    problem = reference_problem(item.expected_output, schema, options or ExtractionOptions())
    return ItemProblem(item_id, problem) if problem else None


def check_items(items: Iterable[DatasetItem], options: ExtractionOptions | None = None) -> list[ItemProblem]:
    """Return the problem of every item that cannot be scored, in order."""
    return [p for item in items if (p := item_problem(item, options)) is not None]


def check_dataset(path: Path) -> tuple[int, list[ItemProblem]]:
    """Read a dataset file and return (item count, problems); a malformed line raises ScoregateError."""
    if not path.is_file():
        raise ScoregateError(f"no such dataset file: {path}", hint="give the path of a .jsonl dataset")
    count = 0
    problems: list[ItemProblem] = []
    for _, item in iter_items(path):
        count += 1
        found = item_problem(item)
        if found is not None:
            problems.append(found)
    return count, problems


def write_dataset(items: Iterable[DatasetItem], path: Path, *, description: str) -> tuple[int, list[ItemProblem]]:
    """Write `<name>.jsonl` and its `<name>.yaml` metadata; return (items written, items that cannot be scored).

    Items with a problem are written too (the evaluator reports them as not scored, with the reason).
    """
    check_dataset_target(path)
    count = 0
    problems: list[ItemProblem] = []
    with replace_atomically(path) as handle:  # a bad source line leaves an existing dataset as it was
        for item in items:
            handle.write(json.dumps(item.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False) + "\n")
            count += 1
            found = item_problem(item)
            if found is not None:
                problems.append(found)
    meta = {"description": description, "input_schema": INPUT_SCHEMA, "metadata": {"task": "extraction"}}
    with replace_atomically(path.with_suffix(".yaml")) as handle:
        handle.write(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return count, problems
