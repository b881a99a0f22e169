"""The local store of imported human feedback (`feedback/scores.jsonl`) and where run items' traces are linked.

Read by judge calibration; written by `scoregate scores import` (scoregate.sinks.langfuse.scores_import),
which posts the same scores to Langfuse. Reading needs no Langfuse: it is a local file, like the run store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["score_id"]] = record
    return records
