"""A run's files on disk: their names, the run id, and reading and writing a run's JSON files (never a half file)."""

from __future__ import annotations

import json
import os
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.support.json_errors import json_position, json_problem

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
LINKS = "links.json"
QUARANTINE = "results.quarantined.jsonl"


RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,254}")
"""A run id: one file name (an experiment name, a time, 4 hex digits), never a path."""


def run_directory(runs_dir: Path, run_id: str) -> Path:
    """Return `runs_dir/run_id`; raise ScoregateError when `run_id` is not a run id (`..`, a `/`, too long...)."""
    if not RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else run_id[:80] + "…"
        raise ScoregateError(
            f"not a run id: {shown!r}",
            hint="a run id is one name of letters, digits, '_', '-' and '.' (e.g. smoke-20260101-120000-a1b2), "
            "never a path; list runs with `scoregate runs list`",
        )
    return runs_dir / run_id


def new_run_id(experiment: str, now: datetime | None = None) -> str:
    """Return a sortable, unique run id like `smoke-20260101-120000-a1b2`."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{experiment}-{stamp}-{secrets.token_hex(2)}"


class StoreWriteError(ScoregateError):
    """The run store could not be written (read-only, full disk...); what was stored before is intact."""

    def __init__(self, path: Path, error: OSError, run_id: str | None = None) -> None:
        reason = error.strerror or str(error)
        fix = "free disk space or make it writable"
        then = f", then resume with `scoregate run --resume {run_id}`" if run_id else ", then run again"
        super().__init__(f"cannot write {path}: {reason}", hint=f"nothing stored before is lost; {fix}{then}")


def write_run_json(path: Path, data: Any) -> None:
    """Write `data` to `path` as indented JSON through a temporary file; raise StoreWriteError naming the path."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StoreWriteError(path, exc, path.parent.name) from None


class DamagedRun(ScoregateError):
    """A run file (manifest.json, summary.json...) that is not valid JSON: truncated or overwritten."""


RESTART_HINT = "the run cannot be resumed from it; its results.jsonl is kept. Start a new run"


def read_run_json(path: Path, *, hint: str = RESTART_HINT) -> dict[str, Any]:
    """Read a run's JSON file; raise DamagedRun naming the file, line and column when it is not valid."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise DamagedRun(f"damaged run file: cannot read it ({exc.strerror})", where=str(path), hint=hint) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DamagedRun(
            f"damaged run file (truncated or overwritten): {json_problem(exc, unit='file', located=False)}",
            where="{}:{}:{}".format(path, *json_position(exc)),
            hint=hint,
        ) from None
    if not isinstance(data, dict):
        raise DamagedRun("damaged run file: not a JSON object", where=str(path), hint=hint)
    return data


class DamagedResults(ScoregateError):
    """A line of results.jsonl that is not a result record (not a partial last line, which is repaired)."""

    def __init__(self, path: Path, line: int, detail: str) -> None:
        self.path, self.line = path, line
        super().__init__(
            f"damaged result record ({detail})",
            where=f"{path}:{line}",
            hint=f"resume with `scoregate run --resume {path.parent.name} --quarantine`: damaged lines move to "
            f"{QUARANTINE} (kept) and their items run again",
        )
