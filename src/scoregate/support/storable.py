"""Keep text and numbers storable as strict JSON in UTF-8.

JSON can carry what UTF-8 JSON cannot store: a lone UTF-16 surrogate (`"\\ud800"` decodes to a code point that
is not a Unicode character, so it has no UTF-8 form) and a number beyond a float's range (`1e400` reads as
infinity, which JSON cannot write). Model replies may hold either; they are made storable here (U+FFFD, null)
and counted, so the record can say what changed. Dataset inputs are refused at validation instead.
"""

from __future__ import annotations

import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> tuple[str, int]:
    """Return `text` with every lone surrogate replaced by U+FFFD, and how many there were."""
    found = len(_SURROGATE.findall(text))
    return (_SURROGATE.sub("\ufffd", text), found) if found else (text, 0)


def surrogate_note(count: int) -> str:
    """The note a record carries when `count` lone surrogates were replaced."""
    return f"{count} lone UTF-16 surrogate{'s' if count > 1 else ''} (not Unicode) stored as U+FFFD"


def number_note(count: int) -> str:
    """The note a record carries when `count` infinite or NaN numbers were stored as null."""
    return f"{count} number{'s' if count > 1 else ''} too large for JSON (Infinity/NaN) stored as null"


def storable(value: Any, counts: dict[str, int]) -> Any:
    """Return a copy of `value` with lone surrogates as U+FFFD and non-finite floats as None; count each kind
    in `counts` (keys `surrogates`, `numbers`)."""
    if isinstance(value, str):
        clean, found = replace_surrogates(value)
        counts["surrogates"] = counts.get("surrogates", 0) + found
        return clean
    if isinstance(value, float) and not math.isfinite(value):
        counts["numbers"] = counts.get("numbers", 0) + 1
        return None
    if isinstance(value, dict):
        return {storable(k, counts): storable(v, counts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v, counts) for v in value]
    return value
