"""The Hugging Face dataset `paraloq/json_data_extraction` (columns text, schema, item) as extraction items.

A hub name is read through the `datasets` library, imported only when needed (it is not a dependency of
scoregate). A local `.parquet` / `.jsonl` / `.json` file in the same format is read with `datasets` when it is
installed, and with pandas / the json module otherwise, so a downloaded copy needs nothing extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from scoregate.catalog.models import DatasetItem
from scoregate.errors import ScoregateError
from scoregate.tracks.extraction.items import extraction_item

HUB_NAME = "paraloq/json_data_extraction"
COLUMNS = ("text", "schema", "item")
LOCAL_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}


def _json_value(value: Any, column: str, where: str) -> Any:
    """Columns `schema` and `item` hold JSON text in the hub's parquet; accept parsed values too."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ScoregateError(f"column {column!r} is not valid JSON ({exc.msg})", where=where) from None


def paraloq_items(
    rows: Iterable[Mapping[str, Any]], *, source: str = HUB_NAME, split: str = "train"
) -> Iterator[DatasetItem]:
    """Yield one extraction item per row: text → input.text, schema → input.schema, item → expected_output."""
    for index, row in enumerate(rows):
        where = f"{source} [{split}] row {index}"
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise ScoregateError(
                f"missing column(s) {', '.join(missing)}; found {', '.join(sorted(row)) or 'none'}",
                where=where,
                hint=f"the {HUB_NAME} format has columns text, schema (JSON) and item (JSON)",
            )
        schema = _json_value(row["schema"], "schema", where)
        if not isinstance(schema, Mapping):
            raise ScoregateError("column 'schema' is not a JSON object", where=where)
        extra = {k: row[k] for k in ("title", "medium") if row.get(k) is not None}
        yield extraction_item(
            f"paraloq-{split}-{index:05d}",
            str(row["text"]),
            schema,
            _json_value(row["item"], "item", where),
            domain=row.get("topic"),
            source=f"{source} ({split})",
            **extra,
        )


def _datasets_library() -> Any:
    library: Any
    try:
        import datasets as library
    except ImportError:
        library = None
    # The project's own `datasets/` folder can shadow the library as an empty namespace package.
    if library is None or not hasattr(library, "load_dataset"):
        raise ScoregateError(
            "reading a Hugging Face dataset needs the `datasets` library, which is not installed",
            hint="run `pip install datasets` in scoregate's environment, or pass a local .parquet/.jsonl file",
        )
    return library


def _local_rows(path: Path) -> Iterable[Mapping[str, Any]]:
    kind = LOCAL_FORMATS.get(path.suffix.lower())
    if kind is None:
        raise ScoregateError(
            f"unsupported file type {path.suffix!r}", where=str(path), hint="use a .parquet, .jsonl or .json file"
        )
    try:
        library = _datasets_library()
    except ScoregateError:
        library = None
    if library is not None:
        rows: Iterable[Mapping[str, Any]] = library.load_dataset(kind, data_files=str(path), split="train")
        return rows
    if kind == "parquet":
        import pandas as pd

        records: list[dict[str, Any]] = pd.read_parquet(path).to_dict("records")
        return records
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json" and text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_paraloq(
    source: str | Path = HUB_NAME, *, split: str = "train", limit: int | None = None
) -> Iterator[DatasetItem]:
    """Yield extraction items from the hub dataset (needs `datasets`) or from a local file in its format."""
    path = Path(source)
    if path.exists():
        rows = _local_rows(path)
        label = path.name
    else:
        rows = _datasets_library().load_dataset(str(source), split=split)
        label = str(source)
    yield from islice(paraloq_items(rows, source=label, split=split), limit)
