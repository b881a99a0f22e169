"""The JSONPath subset a `production:` mapping uses to read a field out of a production trace.

A path starts at `$`, then names its root — `input`, `output` or `metadata` of the trace — and then keys and
list positions: `$.input.title`, `$.metadata['user id']`, `$.output.choices[0].text`. Wildcards, slices,
filters and recursive descent are not supported: a mapping reads one value per field, so a path names one place.
"""

from __future__ import annotations

import re
from typing import Any

ROOTS = ("input", "output", "metadata")
"""What a path may start from: the trace's input (the variables the app logged), its output and its metadata."""
_STEP = re.compile(r"""\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\[(['"])(.*?)\3\]""")
MISSING = object()
"""What `read_path` returns when the trace has no value there (a trace without the mapped field)."""


class PathError(ValueError):
    """A path outside the supported subset, with what to write instead."""


def parse_path(path: str) -> tuple[str | int, ...]:
    """Return the steps of `path` (keys and list positions), its root first; raise PathError on anything else."""
    if not path.startswith("$"):
        raise PathError(f"{path!r} does not start with `$` (write e.g. `$.input.question`)")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise PathError(
                f"{path!r}: cannot read {path[position:]!r}; a path is `$.root.key`, `['key']` and `[0]` steps "
                "(no wildcards, slices or filters)"
            )
        key, index, _, quoted = match.groups()
        steps.append(int(index) if index is not None else (key if key is not None else quoted))
        position = match.end()
    if not steps or steps[0] not in ROOTS:
        raise PathError(f"{path!r} must start with one of {', '.join('$.' + r for r in ROOTS)}")
    return tuple(steps)


def read_path(document: dict[str, Any], steps: tuple[str | int, ...]) -> Any:
    """The value at `steps` in `document`, or MISSING when any step is absent."""
    value: Any = document
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


def read_fields(document: dict[str, Any], paths: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """(values by field, fields the document lacks or holds as null) for `paths` (field → JSONPath, as a mapping
    declares them)."""
    found, missing = {}, []
    for field, path in paths.items():
        value = read_path(document, parse_path(path))
        if value is MISSING or value is None:
            missing.append(field)
        else:
            found[field] = value
    return found, missing
