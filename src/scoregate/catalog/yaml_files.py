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


def read_yaml(path: Path) -> tuple[Any, list[str]]:
    """Parse a YAML file; return (data, problems) with the line of a syntax error."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")), []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [f"{where}: invalid YAML: {problem}"]
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror}"]


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
