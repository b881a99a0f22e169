"""The live judges' scores kept by `scores pull` (feedback/live_judges.jsonl): where they are, and one run's read.

Each line is one server-side judge score of a run's trace with the evaluator and evaluator version that wrote it
(`app.judges_scores` writes them). A damaged line is an error naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError

LIVE_SCORES_FILE = Path("feedback") / "live_judges.jsonl"


def live_records(root: Path) -> Iterator[dict[str, Any]]:
    """Every record of the project's live judge scores, in file order (none without the file)."""
    path = root / LIVE_SCORES_FILE
    if not path.is_file():
        return
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ScoregateError(f"not JSON: {exc}", where=f"{LIVE_SCORES_FILE}:{number}") from None
        if not isinstance(record, dict):
            raise ScoregateError("not a JSON object", where=f"{LIVE_SCORES_FILE}:{number}")
        yield record


def run_live_records(root: Path, run_id: str) -> list[dict[str, Any]]:
    """The live judge scores of one run's traces."""
    return [r for r in live_records(root) if r.get("run_id") == run_id]
