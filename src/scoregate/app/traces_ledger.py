"""What `scoregate traces score` has done, kept on disk so a re-run or a resume after kill -9 does each thing once.

`.scoregate/production/<experiment>/judged.jsonl`: one line per trace and judge version, appended and synced as
soon as the judge answered (its scores, null ones with the reason, and the telemetry of its model calls); a line
cut short by a kill is ignored and that trace judged again. `posted.jsonl`: the score ids Langfuse confirmed.
Neither holds a trace's input or output: only ids, score values, reasons and call telemetry.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.store.records import CallRecord, Score

SCORE_NAMESPACE = uuid.UUID("6f3c1a52-2b9e-4d0e-9a41-0c7a2f5e8b11")
"""Fixed namespace of production score ids: uuid5(namespace, `trace:key:judge@version`)."""


def score_id(trace_id: str, key: str, judge: str, version: int) -> str:
    """The Langfuse id of one score on one production trace: the same for every re-run of the same judge version."""
    return str(uuid.uuid5(SCORE_NAMESPACE, f"{trace_id}:{key}:{judge}@{version}"))


@dataclass(frozen=True)
class Judged:
    """One judge version's scores of one trace, and its calls."""

    trace_id: str
    timestamp: str
    judge: str
    version: int
    scores: list[Score]
    calls: list[CallRecord] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The line written to judged.jsonl."""
        return {
            "trace_id": self.trace_id,
            "timestamp": self.timestamp,
            "judge": self.judge,
            "version": self.version,
            "scores": [asdict(s) for s in self.scores],
            "calls": [asdict(c) for c in self.calls],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Judged:
        """A line of judged.jsonl."""
        return cls(
            trace_id=data["trace_id"],
            timestamp=data["timestamp"],
            judge=data["judge"],
            version=int(data["version"]),
            scores=[Score(**s) for s in data["scores"]],
            calls=[CallRecord(**c) for c in data.get("calls", [])],
        )


def _lines(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    """Every whole JSON line of a ledger file with its `file:line`; a line a kill cut short is skipped, a line that is
    not UTF-8 or not a JSON object is an error naming it."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise ScoregateError("not UTF-8", where=where, hint=_REMOVE) from None
            except ValueError:
                continue
            if not isinstance(row, dict):
                raise ScoregateError(f"not a line of {path.name} (a JSON object)", where=where, hint=_REMOVE)
            yield where, row


_REMOVE = "remove the line: what it recorded is judged again, or posted again under the same score id"


def _not_a_record(where: str, name: str) -> ScoregateError:
    return ScoregateError(f"not a line of {name}", where=where, hint=_REMOVE)


def _append(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Append lines and sync them to disk before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


class TracesLedger:
    """The judged and posted records of one experiment's production scoring."""

    def __init__(self, root: Path, experiment: str) -> None:
        self.folder = root / ".scoregate" / "production" / experiment
        self.judged_path = self.folder / "judged.jsonl"
        self.posted_path = self.folder / "posted.jsonl"

    def judged(self) -> dict[tuple[str, str, int], Judged]:
        """What was judged, by (trace id, judge, version); the newest line wins."""
        found = {}
        for where, row in _lines(self.judged_path):
            try:
                judged = Judged.from_json(row)
            except (KeyError, TypeError, ValueError):
                raise _not_a_record(where, self.judged_path.name) from None
            if not (isinstance(judged.trace_id, str) and isinstance(judged.judge, str)):
                raise _not_a_record(where, self.judged_path.name)
            found[(judged.trace_id, judged.judge, judged.version)] = judged
        return found

    def add_judged(self, judged: Judged) -> None:
        """Record one judge's scores of one trace (synced before the next trace is judged)."""
        _append(self.judged_path, [judged.as_json()])

    def posted(self) -> set[str]:
        """The score ids Langfuse confirmed."""
        ids = set()
        for where, row in _lines(self.posted_path):
            if not isinstance(row.get("id"), str):
                raise _not_a_record(where, self.posted_path.name)
            ids.add(row["id"])
        return ids

    def add_posted(self, ids: Iterable[str]) -> None:
        """Record score ids Langfuse confirmed."""
        _append(self.posted_path, [{"id": i} for i in ids])
