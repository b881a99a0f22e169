"""Read and validate a file of human ratings or online feedback (CSV or JSONL), every problem naming its row."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.support.json_errors import json_problem
from scoregate.support.text_files import read_text_strict

MAX_PROBLEMS = 25
SCORE_ID_NAMESPACE = uuid.UUID("0b7d8f6e-2f4c-4a63-8d1e-5c0de5ca1e02")
TEXT_MAX = 500
COLUMNS = ("trace_id", "observation_id", "run_id", "item_id", "key", "value", "comment", "rater", "timestamp")
_ID = re.compile(r"^\S{1,200}$")


@dataclass(frozen=True)
class KeyRule:
    """What values a feedback key takes, and how Langfuse stores it."""

    data_type: Literal["NUMERIC", "TEXT"]
    description: str
    low: float | None = None
    high: float | None = None
    integers: bool = False

    def check(self, value: Any) -> tuple[float | str | None, str | None]:
        """Return (the value as posted, None) or (None, why it is not valid for this key)."""
        if self.data_type == "TEXT":
            if not isinstance(value, str) or not value.strip():
                return None, "needs non-empty text"
            if len(value) > TEXT_MAX:
                return None, f"is {len(value)} characters; Langfuse keeps at most {TEXT_MAX}"
            return value, None
        number = _number(value)
        if number is None:
            return None, f"needs a number, got {value!r}"
        if self.integers and not number.is_integer():
            return None, f"needs a whole number, got {value!r}"
        assert self.low is not None and self.high is not None
        if not self.low <= number <= self.high:
            return None, f"{number:g} is outside {self.low:g}..{self.high:g}"
        return number, None


SCORE_KEYS: dict[str, KeyRule] = {
    "human_actionability": KeyRule("NUMERIC", "human rating 1-5, as the actionability judge", 1, 5),
    "human_faithfulness": KeyRule("NUMERIC", "human rating 1-5, as the faithfulness judge", 1, 5),
    "human_conciseness": KeyRule("NUMERIC", "human rating 1-5, as the conciseness judge", 1, 5),
    "human_notes": KeyRule("TEXT", "a rater's free-text notes"),
    "online_thumb": KeyRule("NUMERIC", "user feedback: -1 down, 0 neutral, +1 up", -1, 1, integers=True),
    "feedback_comment": KeyRule("TEXT", "a user's feedback comment"),
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class FeedbackScore:
    """One validated row: a score for a trace (or for an item of a run), with where it came from."""

    source: str
    key: str
    value: float | str
    data_type: Literal["NUMERIC", "TEXT"]
    trace_id: str | None = None
    observation_id: str | None = None
    run_id: str | None = None
    item_id: str | None = None
    comment: str | None = None
    rater: str | None = None
    timestamp: dt.datetime | None = None

    @property
    def score_id(self) -> str:
        """A stable id from target, key and rater: importing the row again replaces the score, never duplicates it."""
        target = self.trace_id if self.trace_id else f"run:{self.run_id}/item:{self.item_id}"
        seed = json.dumps([target, self.observation_id, self.key, self.rater])
        return str(uuid.uuid5(SCORE_ID_NAMESPACE, seed))


def _text(raw: dict[str, Any], name: str, problems: list[str]) -> str | None:
    value = raw.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        problems.append(f"{name}: needs text, got {value!r}")
        return None
    return value.strip()


def _timestamp(raw: dict[str, Any], problems: list[str]) -> dt.datetime | None:
    text = _text(raw, "timestamp", problems)
    if text is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        problems.append(f"timestamp: {text!r} is not an ISO 8601 time (e.g. 2026-01-05T09:30:00Z)")
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def parse_row(raw: dict[str, Any], where: str) -> tuple[FeedbackScore | None, list[str]]:
    """Validate one row; return (score, []) or (None, problems each starting with `where`)."""
    problems: list[str] = []
    unknown = sorted(set(raw) - set(COLUMNS))
    if unknown:
        problems.append(f"unknown column {', '.join(unknown)} (columns: {', '.join(COLUMNS)})")
    ids = {name: _text(raw, name, problems) for name in ("trace_id", "observation_id", "run_id", "item_id")}
    for name, ident in ids.items():
        if ident is not None and not _ID.match(ident):
            problems.append(f"{name}: {ident!r} is not an id (no spaces, at most 200 characters)")
    if ids["trace_id"] is None and not (ids["run_id"] and ids["item_id"]):
        problems.append("needs trace_id, or run_id and item_id (the item's trace in that run)")
    if ids["observation_id"] is not None and ids["trace_id"] is None:
        problems.append("observation_id needs the trace_id it belongs to")
    key = _text(raw, "key", problems)
    rule = SCORE_KEYS.get(key or "")
    value: float | str | None = None
    if key is None:
        problems.append("key: missing")
    elif rule is None:
        problems.append(f"key: unknown key {key!r} (known: {', '.join(SCORE_KEYS)})")
    elif raw.get("value") is None or raw.get("value") == "":
        problems.append(f"value: missing ({key}: {rule.description})")
    else:
        value, why = rule.check(raw["value"])
        if why:
            problems.append(f"value: {key} {why} ({rule.description})")
    comment, rater, timestamp = (
        _text(raw, "comment", problems),
        _text(raw, "rater", problems),
        _timestamp(raw, problems),
    )
    if problems or rule is None or key is None or value is None:
        return None, [f"{where}: {p}" for p in problems]
    score = FeedbackScore(
        source=where, key=key, value=value, data_type=rule.data_type, comment=comment, rater=rater,
        timestamp=timestamp, **ids,
    )  # fmt: skip
    return score, []


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Yield (line, raw row or None, problem) from a CSV file with a header, or a JSONL file."""
    with io.StringIO(read_text_strict(path).removeprefix("\ufeff"), newline="") as handle:
        if path.suffix.lower() == ".csv":
            reader = csv.DictReader(handle)
            for row in reader:
                extra = row.pop(None, None)
                yield reader.line_num, row, f"{len(extra)} more cells than columns" if extra else None
            return
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                yield line_no, None, json_problem(exc)
                continue
            if not isinstance(raw, dict):
                yield line_no, None, "expected a JSON object {trace_id, key, value, comment}"
                continue
            yield line_no, raw, None


def read_feedback(path: Path) -> list[FeedbackScore]:
    """Return every row of a CSV or JSONL feedback file; raise ValidationFailed naming each bad row."""
    if path.suffix.lower() not in (".csv", ".jsonl"):
        raise ScoregateError(f"{path}: expected a .csv or .jsonl file", hint="export the ratings as CSV or JSONL")
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "no such file"
        raise ScoregateError(f"{path}: {what}", hint="give the path of the CSV or JSONL file to import")
    scores: list[FeedbackScore] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for line, raw, problem in _rows(path):
        where = f"{path}:{line}"
        if problem:
            problems.append(f"{where}: {problem}")
        if raw is None:
            continue
        score, found = parse_row(raw, where)
        problems.extend(found)
        if score is not None:
            if score.score_id in seen:
                problems.append(f"{where}: the same score as {seen[score.score_id]} (same target, key and rater)")
            seen[score.score_id] = where
            scores.append(score)
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"{path}: stopped after {MAX_PROBLEMS} problems")
            break
    if problems:
        raise ValidationFailed(problems, hint="fix the rows above; nothing was imported")
    if not scores:
        raise ScoregateError(f"{path}: no rows to import")
    return scores
