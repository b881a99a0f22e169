"""Schema-Guided Dialogue extraction records (`sgd_extraction.jsonl`) as scoregate extraction items."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from scoregate.catalog.models import DatasetItem
from scoregate.errors import ScoregateError
from scoregate.support.json_errors import json_problem
from scoregate.tracks.extraction.items import extraction_item

REQUIRED_FIELDS = ("id", "text", "json_schema", "expected")


def sgd_item(record: Mapping[str, Any], *, where: str = "SGD record") -> DatasetItem:
    """Convert one SGD record (id, service, text, json_schema, expected, expected_alternatives, intents)."""
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        raise ScoregateError(
            f"missing field(s) {', '.join(missing)}",
            where=where,
            hint="each record needs id, text, json_schema and expected (the sgd_extraction.jsonl format)",
        )
    extra = {k: record[k] for k in ("intents", "source_file") if k in record}
    return extraction_item(
        str(record["id"]),
        record["text"],
        record["json_schema"],
        record["expected"],
        domain=record.get("service"),
        alternatives=record.get("expected_alternatives") or None,
        source="Schema-Guided Dialogue (SGD), CC BY-SA 4.0",
        **extra,
    )


def load_sgd(path: Path) -> Iterator[DatasetItem]:
    """Yield the extraction items of an `sgd_extraction.jsonl` file; a bad line raises ScoregateError (file:line)."""
    if not path.is_file():
        raise ScoregateError(f"no such file: {path}", hint="give the path of sgd_extraction.jsonl")
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ScoregateError(json_problem(exc), where=where, hint="each line must be one JSON object") from None
            if not isinstance(record, dict):
                raise ScoregateError("expected a JSON object", where=where)
            yield sgd_item(record, where=where)
