"""Read YAML user files into strict models, turning every failure into `file: field: message` lines."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

from scoregate.support.text_files import not_utf8

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


def format_validation_error(
    where: str, error: ValidationError, schema: Callable[[], dict[str, Any]] | None = None
) -> list[str]:
    """Return one `where: field.path: message` line per pydantic error.

    `schema()` returns the file kind's JSON Schema; with it, an unknown field gets the closest allowed names.
    """
    lines = []
    for loc_parts, kind, message in _readable(error.errors(include_url=False)):
        loc = ".".join(str(p) for p in loc_parts if p not in ("function-after", "tagged-union"))
        msg = message.removeprefix("Value error, ")
        if kind == "extra_forbidden":
            msg = _unknown_field(loc_parts, schema)
        elif kind == "union_tag_not_found":
            msg = "missing `kind:` (it says which kind of file this is; see the JSON Schema in schemas/)"
        lines.append(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}")
    return lines


def _unknown_field(loc: tuple[Any, ...], schema: Callable[[], dict[str, Any]] | None) -> str:
    """The message for a key the model forbids: the closest allowed names when the schema knows them."""
    from scoregate.catalog.field_names import allowed_fields
    from scoregate.support.suggest import did_you_mean

    allowed = allowed_fields(schema(), loc[:-1]) if schema is not None and loc else []
    suggestion = did_you_mean(str(loc[-1]), allowed) if allowed else ""
    if suggestion:
        return f"unknown field; {suggestion} (allowed here: {', '.join(allowed)})"
    if allowed:
        return f"unknown field (allowed here: {', '.join(allowed)})"
    return "unknown field (check the spelling; see the JSON Schema in schemas/)"


MAX_YAML_BYTES = 1024 * 1024
"""The largest YAML file scoregate reads (the shipped ones are under 12 KB); a bigger one is refused unread."""
MAX_ALIAS_NODES = 100_000
"""How many values aliases (`*name`) may add to a file once expanded: an alias bomb expands to billions."""
MAX_DEPTH = 200
"""How deeply values may nest."""
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser: ~5× faster


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[valid-type,misc]
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


class _TooLarge(Exception):
    """A YAML document past one of the bounds above; `line` is where (0: the whole file)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_size(root: yaml.Node) -> None:
    """Raise _TooLarge when the node graph nests too deeply, loops, or its aliases expand it too far.

    Aliases share nodes, so the graph is small even when its expansion is not: sizes are counted per distinct
    node (each once, without building anything), and the expansion is that count with shared nodes repeated.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, finished = stack.pop()
        if finished:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _children(node))
            on_path.discard(id(node))
            continue
        if id(node) in sizes:
            continue
        line = node.start_mark.line + 1
        if depth > MAX_DEPTH:
            raise _TooLarge(f"values nest more than {MAX_DEPTH} levels deep; flatten them", line)
        on_path.add(id(node))
        stack.append((node, depth, True))
        for child in _children(node):
            if id(child) in on_path:
                raise _TooLarge("an alias (*name) refers to a value that contains it (a loop); write it out", line)
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))
    added = sizes[id(root)] - len(sizes)
    if added > MAX_ALIAS_NODES:
        raise _TooLarge(
            f"aliases (*name) expand this file by {added:,} values, more than the {MAX_ALIAS_NODES:,} allowed "
            "(an alias bomb?); write the values out or use fewer aliases"
        )


def _load(text: str) -> Any:
    """Parse one YAML document with the bounds checked on the parsed nodes, before any value is built."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _indented_by_tab(text: str, line: int) -> bool:
    """True when line `line` (0-based) of `text` starts with a tab among its leading whitespace."""
    lines = text.splitlines()
    return 0 <= line < len(lines) and "\t" in lines[line][: len(lines[line]) - len(lines[line].lstrip())]


def read_yaml(path: Path) -> tuple[Any, list[str]]:
    """Parse a YAML file; return (data, problems) with the line of a syntax error, duplicate key or bad byte.

    A file over MAX_YAML_BYTES is refused before it is read; one whose aliases would expand it past
    MAX_ALIAS_NODES values, or that nests past MAX_DEPTH levels, before any value is built.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)  # never more, whatever the file claims to be
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror}"]
    if len(data) > MAX_YAML_BYTES:
        return None, [
            f"{path}: more than {MAX_YAML_BYTES:,} bytes, the most a scoregate YAML file may have "
            "(the shipped ones are under 12 KB); keep data in datasets/*.jsonl"
        ]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [not_utf8(path, data, exc)]
    try:
        return _load(text), []
    except _TooLarge as exc:
        return None, [f"{path}:{exc.line}: {exc}" if exc.line else f"{path}: {exc}"]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        if str(problem).startswith("duplicate key"):
            return None, [f"{where}: {problem}"]
        if mark is not None and _indented_by_tab(text, mark.line):
            return None, [f"{where}: a tab indents this line; YAML indents with spaces: replace the tab"]
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
        return None, format_validation_error(str(path), exc, lambda: adapter.json_schema(by_alias=True))
