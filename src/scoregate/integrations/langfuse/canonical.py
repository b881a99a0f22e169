"""The canonical form of JSON content, as Langfuse stores and returns it, for comparing local files with the server.

The server parses every body with JavaScript, so a number comes back in JavaScript's shortest form (`219.0`
is returned as `219`, `0.0` as `0`), keys in any order, and a string holding JSON comes back parsed. Two
values are the same content when their canonical forms are equal.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any


def canonical(value: Any) -> Any:
    """Return `value` with integral floats as ints (as JavaScript prints them), recursively."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def parsed(value: Any) -> Any:
    """Return `value` as the server stores it: a string holding JSON (`"4"`, `'{"a": 1}'`) comes back parsed."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of `value`: numbers by value, keys sorted, no insignificant whitespace."""
    return json.dumps(canonical(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_hash(value: Any) -> str:
    """Return the SHA-256 of `canonical_json(value)`."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
