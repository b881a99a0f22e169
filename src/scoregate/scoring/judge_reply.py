"""Reading a judge's reply: find the JSON object, check each field against its declared type and range (a value
the rubric does not allow is null with the reason, never clamped and never 0), and merge k samples."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from typing import Any

from scoregate.catalog.models import JudgeField
from scoregate.store.records import ScoreValue

REASONING_FIELD = "reasoning"
BARE_NUMBER = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?\s*$")
"""A reply that is just a number (read as the primary score alone)."""

Parsed = dict[str, tuple[ScoreValue, str | None]]
"""key → (value, None) when measured, (None, reason) when not."""


def find_object(text: str) -> Any:
    """The reply as JSON, else the first `{...}` object in it, else None."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    decoder = json.JSONDecoder(strict=False)
    start = text.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None


def field_in_reply(reply: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(present, value) for `key`, matching the key exactly or else ignoring case."""
    if key in reply:
        return True, reply[key]
    for k, v in reply.items():
        if isinstance(k, str) and k.lower() == key.lower():
            return True, v
    return False, None


def check_reasoning(reply: dict[str, Any]) -> tuple[ScoreValue, str | None]:
    """The reply's reasoning as text, or None and why it has none."""
    present, value = field_in_reply(reply, REASONING_FIELD)
    if not present or value is None:
        return None, f"judge reply has no {REASONING_FIELD!r} field"
    return _as_text(REASONING_FIELD, value)


def _as_text(key: str, value: Any) -> tuple[ScoreValue, str | None]:
    if isinstance(value, str):
        return value.strip(), None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(v.strip() for v in value), None
    return None, f"judge replied {_show(value)} for {key!r}, not text"


def check_field(f: JudgeField, found: tuple[bool, Any]) -> tuple[ScoreValue, str | None]:
    """Validate one field of the reply: the value when allowed, else None and the specific reason."""
    present, value = found
    if not present:
        return None, f"judge reply has no {f.key!r} field"
    if value is None:
        return None, f"judge replied null for {f.key!r}"
    if f.data_type == "text":
        return _as_text(f.key, value)
    if f.data_type == "categorical":
        if isinstance(value, str):
            for c in f.categories or []:
                if value.strip().lower() == c.lower():
                    return c, None
        return None, f"judge replied {_show(value)}, not one of {', '.join(f.categories or [])}"
    number = reply_number(value)
    if f.data_type == "boolean":
        if isinstance(value, bool):
            return int(value), None
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return int(value.strip().lower() == "true"), None
        if number in (0, 1):
            return int(number), None
        return None, f"judge replied {_show(value)}, not 0 or 1"
    if number is None:
        return None, f"judge replied {_show(value)}, not a number"
    if f.range is None:
        if number != int(number) or number < 0:
            return None, f"judge replied {_show(value)}, not a whole number >= 0"
        return int(number), None
    lo, hi = f.range
    span = f"{number_text(lo)}-{number_text(hi)}"
    if integral_range(f) and number != int(number):
        return None, f"judge replied {_show(value)}, not a whole number in {span}"
    if not lo <= number <= hi:
        return None, f"judge replied {_show(value)}, outside {span}"
    return (int(number) if integral_range(f) else number), None


def reply_number(value: Any) -> float | int | None:
    """A JSON number or a numeric string as a number; None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and BARE_NUMBER.match(value):
        text = value.strip()
        return float(text) if "." in text else int(text)
    return None


def merge_samples(
    f: JudgeField, samples: list[tuple[ScoreValue, str | None]]
) -> tuple[ScoreValue, str | None, float | None]:
    """(value, reason, spread) of one key over the samples."""
    if len(samples) == 1:
        return samples[0][0], samples[0][1], None
    measured = [v for v, _ in samples if v is not None]
    if len(measured) * 2 < len(samples):
        first = next((why for v, why in samples if v is None), None)
        return None, f"only {len(measured)} of {len(samples)} judge samples measured {f.key}: {first}", None
    if f.data_type in ("numeric", "boolean"):
        numbers = [float(v) for v in measured if isinstance(v, int | float)]
        spread = max(numbers) - min(numbers)
        if f.data_type == "numeric":
            middle = statistics.median(numbers)
            return (int(middle) if middle == int(middle) else middle), None, spread
        ones = sum(1 for n in numbers if n == 1)
        if ones * 2 == len(numbers):
            return None, f"judge samples split evenly on {f.key} ({ones} said 1, {ones} said 0)", spread
        return int(ones * 2 > len(numbers)), None, spread
    if f.data_type == "categorical":
        ranked = Counter(measured).most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            return None, f"judge samples tie on {f.key}: {ranked[0][0]!r} and {ranked[1][0]!r}", None
        return ranked[0][0], None, None
    return measured[0], None, None


def pick_reasoning(samples: list[Parsed], primary: str, value: ScoreValue) -> tuple[str | None, str]:
    """The reasoning of the sample whose primary score is nearest the merged value, or why there is none."""
    usable = [s for s in samples if isinstance(s[REASONING_FIELD][0], str)]
    if len(usable) * 2 < len(samples) or not usable:
        first = next((s[REASONING_FIELD][1] for s in samples if s[REASONING_FIELD][1]), None)
        return None, first or "no judge reasoning"

    def distance(s: Parsed) -> float:
        v = s[primary][0]
        if v == value:
            return 0.0
        if isinstance(v, int | float) and isinstance(value, int | float):
            return abs(float(v) - float(value))
        return float("inf")

    best = min(usable, key=distance)
    return str(best[REASONING_FIELD][0]), ""


def integral_range(f: JudgeField) -> bool:
    """True when both ends of the field's range are whole numbers (the score is an integer)."""
    return f.range is not None and all(x == int(x) for x in f.range)


def number_text(x: float) -> str:
    """A range end as written: `5`, not `5.0`."""
    return str(int(x)) if x == int(x) else str(x)


def _show(value: Any) -> str:
    """A reply value as the user should see it in a reason (short)."""
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    text = str(value) if is_number else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
