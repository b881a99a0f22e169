"""The promotion audit trail: `promotions.jsonl` in the project root, one record per promote or rollback.

Langfuse keeps no label history, and a project without Langfuse has no other record of which prompt version holds
a label: this file is both the history (`scoregate promotions`, rollbacks) and, read by the regression gates
(`scoregate.analysis.regression`), the authority on which version is `production`. It is a file to commit.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.analysis.regression import PROMOTIONS_LOG
from scoregate.app.promotion_evidence import experiment_gates_hash
from scoregate.errors import ScoregateError

if TYPE_CHECKING:
    from scoregate.app.promotion_result import PromotionResult
    from scoregate.catalog.project import Project


def promotion_history(root: Path, prompt: str | None = None) -> list[dict[str, Any]]:
    """Return the audit records of `promotions.jsonl`, oldest first (of one prompt when named); a damaged line is an
    error naming it."""
    path = root / PROMOTIONS_LOG
    if not path.is_file():
        return []
    records = []
    restore = "restore the line from git (the file is meant to be committed), or remove it"
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = raw[exc.start : exc.start + 1].hex()
            raise ScoregateError(f"not UTF-8 (byte 0x{byte})", where=where, hint=restore) from None
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ScoregateError(f"not a JSON line ({exc})", where=where, hint=restore) from None
        if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in _NEEDED):
            raise ScoregateError(
                "not a promotion record: a JSON object with time, action, prompt and label as text", where=where,
                hint=restore,
            )  # fmt: skip
        records.append(record)
    return [r for r in records if prompt is None or r.get("prompt") == prompt]


_NEEDED = ("time", "action", "prompt", "label")


def active_promotions(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the promotions of one label not undone by a later rollback, oldest first: the rollback stack.

    Each rollback undoes the newest promotion still active (the one named by its `undoes`), so successive
    rollbacks walk back through the history instead of flipping between two versions.
    """
    active: list[dict[str, Any]] = []
    for record in history:
        if record.get("action") == "rollback":
            undone = [r for r in active if r["time"] == record.get("undoes")] or active[-1:]
            for r in undone:
                active.remove(r)
        else:
            active.append(record)
    return active


def recorded_holder(root: Path, prompt: str, label: str) -> int | str | None:
    """The version the newest record of `prompt` and `label` leaves holding the label (the regression gates' rule)."""
    moves = [r for r in promotion_history(root, prompt) if r.get("label") == label and "version" in r]
    return moves[-1]["version"] if moves else None


def audit_record(
    project: Project, result: PromotionResult, reason: str | None, undoes: str | None, langfuse_host: str | None
) -> dict[str, Any]:
    """The record of one move as `promotions.jsonl` keeps it (`langfuse_host` None: a local promotion)."""
    config = project.config_path
    experiments, known = {e.experiment for e in result.evidence}, set(project.config.experiments)
    return {
        "action": result.action,
        "prompt": result.prompt,
        "label": result.label,
        "version": result.version,
        "previous_version": result.previous_version,
        "evidence": [e.to_dict() for e in result.evidence],
        "evidence_runs": [e.mlflow_run_id for e in result.evidence if e.mlflow_run_id],
        "gate_file": str(config.name),
        "gate_file_hash": hashlib.sha256(config.read_bytes()).hexdigest() if config.is_file() else None,
        "gates_hash": {x: experiment_gates_hash(project, x) for x in sorted(experiments & known)},
        "forced": result.forced,
        "failures": result.failures,
        "judges": [j.to_dict() for j in result.judges],
        "reason": reason,
        "undoes": undoes,
        "user": os.environ.get("SCOREGATE_USER") or getpass.getuser(),
        "time": datetime.now(UTC).isoformat(),
        "langfuse_host": langfuse_host,
        "local": langfuse_host is None,
        "mlflow_alias_version": result.mlflow_alias,
    }


def append_record(root: Path, record: dict[str, Any]) -> None:
    """Append one record to the project's `promotions.jsonl`."""
    with (root / PROMOTIONS_LOG).open("a", encoding="utf-8") as log:
        log.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
