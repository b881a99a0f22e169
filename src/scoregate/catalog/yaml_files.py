"""Read YAML user files into strict models, turning every failure into `file: field: message` lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


_BRANCH = re.compile(r"^(str|int|float|bool|none|constrained-\w+|function-\w+\[.*\]|(list|dict|tuple)\[.*\])$")
"""A loc element pydantic adds for one member of a union (`str | PromptRoute` gives 'str' and 'function-after[…]')."""


def _union_branches(errors: list[Any]) -> dict[int, int]:
    """Map the index of each error inside a union to the position of its branch tag in `loc`."""
    found: dict[int, int] = {}
    for i, e in enumerate(errors):
        for k, part in enumerate(e["loc"]):
            if isinstance(part, str) and _BRANCH.match(part):
                found[i] = k
                break
    return found


def _readable(errors: list[Any]) -> list[tuple[tuple[Any, ...], str, str]]:
    """Return (loc, type, message) per error, with each union's branches folded into the errors that matter.

    When a value has the shape of one member of a union (a mapping for `str | PromptRoute`), only that
    member's errors are kept; when it has the shape of none, one line lists what each member expects.
    """
    branches = _union_branches(errors)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, k in branches.items():
        groups.setdefault(tuple(errors[i]["loc"][:k]), []).append(i)
    branches = {i: k for i, k in branches.items() if len(groups[tuple(errors[i]["loc"][:k])]) > 1}
    shown: list[tuple[tuple[Any, ...], str, str]] = []
    done: set[int] = set()
    for i, e in enumerate(errors):
        if i in done:
            continue
        if i not in branches:
            shown.append((tuple(e["loc"]), e["type"], e["msg"]))
            continue
        prefix = tuple(e["loc"][: branches[i]])
        members = groups[prefix]
        done.update(members)
        fitting = [j for j in members if not errors[j]["type"].endswith("_type")]
        if fitting:
            for j in fitting:
                loc = errors[j]["loc"]
                shown.append((prefix + tuple(loc[branches[j] + 1 :]), errors[j]["type"], errors[j]["msg"]))
        else:
            expected = " or ".join(dict.fromkeys(errors[j]["msg"].removeprefix("Input should be ") for j in members))
            shown.append((prefix, "union_type", f"Input should be {expected}"))
    return shown


def format_validation_error(where: str, error: ValidationError) -> list[str]:
    """Return one `where: field.path: message` line per pydantic error."""
    lines = []
    for loc_parts, kind, message in _readable(error.errors(include_url=False)):
        loc = ".".join(str(p) for p in loc_parts if p not in ("function-after", "tagged-union"))
        msg = message.removeprefix("Value error, ")
        if kind == "extra_forbidden":
            msg = "unknown field (check the spelling; see the JSON Schema in schemas/)"
        elif kind == "union_tag_not_found":
            msg = "missing `kind:` (it says which kind of file this is; see the JSON Schema in schemas/)"
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

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScoregateError(f"cannot read: {exc.strerror}", where=str(path)) from None
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
