"""One results.jsonl line: a result made strict JSON in UTF-8, with known secrets masked in its error texts."""

from __future__ import annotations

import json

from scoregate.store.records import ItemResult
from scoregate.support.redaction import redact, redact_optional
from scoregate.support.storable import number_note, storable, surrogate_note


def json_line(result: ItemResult) -> str:
    """One results.jsonl line: strict JSON in UTF-8. A lone UTF-16 surrogate (legal in JSON, not Unicode) becomes
    U+FFFD and an infinite or NaN number null (`scoregate.support.storable`); the record's `notes` say so."""
    row = result.to_json_dict()
    try:
        line = json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)
        line.encode("utf-8")
    except ValueError:  # UnicodeEncodeError is one
        counts: dict[str, int] = {}
        row = storable(row, counts)
        if counts.get("surrogates"):
            result.notes.append(surrogate_note(counts["surrogates"]))
        if counts.get("numbers"):
            result.notes.append(number_note(counts["numbers"]))
        row["notes"] = list(result.notes)
        line = json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)
    return line + "\n"


def redact_result(result: ItemResult) -> None:
    """Mask known secrets in every error text of a result (an endpoint may echo the key back)."""
    result.error = redact_optional(result.error)
    if result.error is not None and result.raw_output is not None:
        result.raw_output = redact(result.raw_output)
    for call in result.calls:
        call.error = redact_optional(call.error)
    for score in result.scores:
        score.reason = redact_optional(score.reason)
        score.comment = redact_optional(score.comment)
