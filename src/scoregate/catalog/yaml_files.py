"""Read YAML user files into strict models, turning every failure into `file: field: message` lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


def format_validation_error(where: str, error: ValidationError) -> list[str]:
    """Return one `where: field.path: message` line per pydantic error."""
    lines = []
    for e in error.errors(include_url=False):
        loc = ".".join(str(p) for p in e["loc"] if p not in ("function-after", "tagged-union"))
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling; see the JSON Schema in schemas/)"
        lines.append(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}")
    return lines


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects a key given twice in one mapping (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key]}); the later one would "
                    "silently replace it", key_node.start_mark,
                )  # fmt: skip
            if isinstance(key, str | int | float | bool):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def not_utf8(path: Path, data: bytes, error: UnicodeDecodeError) -> str:
    """Return `file:line: not UTF-8 ...` for the first undecodable byte of `data`."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    byte = data[error.start : error.start + 1].hex()
    return f"{path}:{line}: not UTF-8 (byte 0x{byte} at column {column}); save the file as UTF-8"


def read_text_strict(path: Path) -> str:
    """Read a UTF-8 file; raise ScoregateError naming file:line at the first byte that is not UTF-8."""
    from scoregate.errors import ScoregateError

    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScoregateError(not_utf8(path, data, exc)) from None


def read_yaml(path: Path) -> tuple[Any, list[str]]:
    """Parse a YAML file; return (data, problems) with the line of a syntax error, duplicate key or bad byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror}"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [not_utf8(path, data, exc)]
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader), []  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        if str(problem).startswith("duplicate key"):
            return None, [f"{where}: {problem}"]
        return None, [f"{where}: invalid YAML: {problem}"]


def load_model(path: Path, adapter: TypeAdapter[T]) -> tuple[T | None, list[str]]:
    """Read and validate one YAML file; return (model, problems)."""
    data, problems = read_yaml(path)
    if problems:
        return None, problems
    if not isinstance(data, dict):
        return None, [f"{path}: expected a mapping of fields at the top level"]
    try:
        return adapter.validate_python(data), []
    except ValidationError as exc:
        return None, format_validation_error(str(path), exc)
