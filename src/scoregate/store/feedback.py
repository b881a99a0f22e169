"""The local store of imported human feedback (`feedback/scores.jsonl`) and where run items' traces are linked.

Read by judge calibration; written by `scoregate scores import` (scoregate.app.scores_import),
which posts the same scores to Langfuse. Reading needs no Langfuse: it is a local file, like the run store.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.support.json_errors import json_problem
from scoregate.support.text_files import read_text_strict

FEEDBACK_FILE = Path("feedback") / "scores.jsonl"
TRACE_LINKS_KEY = "langfuse_trace_ids"
"""Key of runs/<run_id>/links.json mapping each item id to its Langfuse trace id (written by the Langfuse mirror)."""


def feedback_path(root: Path) -> Path:
    """Return the project's local feedback store."""
    return root / FEEDBACK_FILE


def load_feedback(root: Path) -> dict[str, dict[str, Any]]:
    """Return the newest local record of every imported score, by score id (empty when nothing was imported)."""
    path = feedback_path(root)
    records: dict[str, dict[str, Any]] = {}
    if not os.path.lexists(path):
        return records
    for number, line in enumerate(read_text_strict(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            record = json_problem(exc)
        if not isinstance(record, dict) or not isinstance(record.get("score_id"), str):
            raise ScoregateError(
                f"damaged feedback record: {record if isinstance(record, str) else 'not a record with a score_id'}",
                where=f"{path}:{number}",
                hint="fix or remove this line (`scoregate scores import` writes one JSON record per line); "
                "the file's other records are kept",
            )
        records[record["score_id"]] = record
    return records
