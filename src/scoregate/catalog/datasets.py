"""Stream dataset files item by item, with file:line errors, default ids and a content hash."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scoregate.catalog.models import DatasetItem, DatasetMeta
from scoregate.catalog.yaml_files import format_validation_error
from scoregate.errors import ScoregateError
from scoregate.support.json_errors import json_problem

MAX_PROBLEMS = 25
BOM = "\ufeff"
"""A UTF-8 byte-order mark, which some editors write at the start of a file: it is not part of the first line."""


@dataclass(frozen=True, slots=True)
class DatasetRef:
    """A dataset on disk: its JSONL file and its optional metadata file."""

    name: str
    path: Path
    meta: DatasetMeta
    meta_path: Path | None = None


@dataclass(slots=True)
class DatasetScan:
    """What one pass over a dataset found: item count, content hash and problems."""

    count: int = 0
    content_hash: str = ""
    problems: list[str] = field(default_factory=list)


def content_id(item: DatasetItem) -> str:
    """Return a stable id derived from an item's input and expected output."""
    blob = json.dumps([item.input, item.expected_output], sort_keys=True, ensure_ascii=False)
    return "h-" + hashlib.sha256(blob.encode()).hexdigest()[:16]


def parse_line(path: Path, line_no: int, line: str) -> DatasetItem:
    """Parse one JSONL line into an item with an id; raise ScoregateError naming file:line."""
    where = f"{path}:{line_no}"
    too_large: list[str] = []

    def finite(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            too_large.append(text)
        return value

    try:
        text = line.removeprefix(BOM) if line_no == 1 else line
        raw = json.loads(text, parse_constant=_not_json_number, parse_float=finite)
    except json.JSONDecodeError as exc:
        raise ScoregateError(
            json_problem(exc),
            where=where,
            hint="each line must be one JSON object; fix or remove this line",
        ) from None
    except ValueError as exc:
        raise ScoregateError(str(exc), where=where, hint="write a number, or null for a missing value") from None
    except RecursionError:
        raise ScoregateError(
            "nested too deeply to read (thousands of levels of [ or {)", where=where, hint="flatten the value"
        ) from None
    if not isinstance(raw, dict):
        raise ScoregateError("expected a JSON object {id, input, ...}", where=where)
    if too_large or "\\ud" in text.lower():
        _refuse_unstorable(raw, too_large, where)
    try:
        item = DatasetItem.model_validate(raw)
    except ValidationError as exc:
        named = f" (item {raw['id']!r})" if isinstance(raw.get("id"), str) and raw["id"] else ""
        no_input = any(e["loc"] == ("input",) and e["type"] == "missing" for e in exc.errors())
        raise ScoregateError(
            "; ".join(p.removeprefix(where + ": ") for p in format_validation_error(where, exc, _item_schema)) + named,
            where=where,
            hint="every item needs an `input` object: the fields its prompt reads" if no_input else None,
        ) from None
    return item if item.id else item.model_copy(update={"id": content_id(item)})


def _item_schema() -> dict[str, Any]:
    return DatasetItem.model_json_schema(by_alias=True)


def _refuse_unstorable(raw: Any, too_large: list[str], where: str) -> None:
    """Raise naming the first field whose value JSON can read but scoregate cannot store: a lone UTF-16 surrogate
    (not Unicode, so not UTF-8) or a number beyond a float's range (it would be written as Infinity)."""
    for name, value in _leaves(raw, ""):
        if isinstance(value, str) and (bad := next((c for c in value if "\ud800" <= c <= "\udfff"), None)):
            raise ScoregateError(
                f"{name}: a lone UTF-16 surrogate (\\u{ord(bad):04x}) is not a Unicode character",
                where=where,
                hint="write the character it stands for (or its whole \\ud83d\\ude00-style pair), or remove it",
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ScoregateError(
                f"{name}: {too_large[0]} is too large for a JSON number (it would be stored as Infinity)",
                where=where,
                hint="write a smaller number, a string, or null",
            )


def _leaves(value: Any, field: str) -> Iterator[tuple[str, Any]]:
    """Yield (dotted field, value) for every key and scalar inside `value`; keys are checked as values too."""
    if isinstance(value, dict):
        for key, inner in value.items():
            name = f"{field}.{key}" if field else str(key)
            yield name, key
            yield from _leaves(inner, name)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _leaves(inner, f"{field}.{index}")
    else:
        yield field, value


def _not_json_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def decode_line(path: Path, line_no: int, raw_line: bytes) -> str:
    """Decode one line strictly; raise ScoregateError naming file:line when it is not UTF-8."""
    try:
        return raw_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw_line[exc.start : exc.start + 1].hex()
        raise ScoregateError(
            f"not UTF-8 (byte 0x{byte} at column {exc.start + 1})",
            where=f"{path}:{line_no}",
            hint="save the dataset as UTF-8",
        ) from None


def iter_items(path: Path) -> Iterator[tuple[int, DatasetItem]]:
    """Yield (line number, item) for each non-blank line; raise ScoregateError at the first bad line."""
    with path.open("rb") as handle:
        for line_no, raw_line in enumerate(handle, start=1):
            line = decode_line(path, line_no, raw_line)
            if line.strip():
                yield line_no, parse_line(path, line_no, line)


def scan(path: Path, check: Callable[[int, DatasetItem], list[str]] | None = None) -> DatasetScan:
    """Read the whole file once: count items, hash the content, collect problems (bad lines, duplicate ids)."""
    result = DatasetScan()
    digest = hashlib.sha256()
    seen: dict[str, int] = {}
    with path.open("rb") as handle:
        for line_no, raw_line in enumerate(handle, start=1):
            digest.update(raw_line)
            try:
                line = decode_line(path, line_no, raw_line)
                if not line.strip():
                    continue
                item = parse_line(path, line_no, line)
            except ScoregateError as exc:
                result.problems.append(exc.render())
                continue
            result.count += 1
            assert item.id is not None
            if item.id in seen:
                result.problems.append(
                    f"{path}:{line_no}: duplicate item id {item.id!r} (first on line {seen[item.id]})"
                )
            else:
                seen[item.id] = line_no
            if check is not None:
                result.problems.extend(f"{path}:{line_no}: {p}" for p in check(line_no, item))
            if len(result.problems) >= MAX_PROBLEMS:
                result.problems.append(f"{path}: stopped after {MAX_PROBLEMS} problems")
                break
    result.content_hash = digest.hexdigest()
    return result
