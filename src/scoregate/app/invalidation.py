"""Invalidating a run (`scoregate runs invalidate`): the local mark, then every mirror's (MLflow's tags, Langfuse's
`run_valid` score), through `mirror_all`."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.store.invalidation import INVALIDATION_FILE, invalidation_of
from scoregate.store.lock import RunLock
from scoregate.store.run_store import RunStore

INVALIDATE_HINT = "wait for the run to finish (or stop it), then invalidate it; its summary is still being written"


@dataclass
class InvalidationReport:
    """What `runs invalidate` did where."""

    run_id: str
    record: dict[str, Any]
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def invalidate_run(root: Path, run_id: str, reason: str, *, superseded_by: str | None = None) -> InvalidationReport:
    """Mark a run invalid in the local store, as MLflow tags and in Langfuse; report each place."""
    if not reason.strip():
        raise ScoregateError("--reason is empty", hint="say why the run is invalid, e.g. a gold-label error")
    runs = root / "runs"
    store = RunStore.open(runs, run_id)
    if superseded_by is not None:
        if superseded_by == run_id:
            raise ScoregateError("a run cannot supersede itself", hint="give the id of the run that replaces it")
        replacement = RunStore.open(runs, superseded_by)
        if invalidation_of(replacement) is not None:
            raise ScoregateError(f"run {superseded_by} is itself invalid", hint="name a valid replacement run")
    record = {
        "valid": False,
        "invalid_reason": reason.strip(),
        "invalidated_at": datetime.now(UTC).isoformat(),
        "superseded_by": superseded_by,
    }
    with RunLock(store.directory, hint=INVALIDATE_HINT):
        path = store.directory / INVALIDATION_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
        os.replace(tmp, path)
        report = InvalidationReport(run_id, record, done=[f"local store: {path}"])
        summary = store.summary
        if summary is not None:
            store.write_summary({**summary, **record})
        _mark_mirrors(store, root, record, report)
    return report


def _mark_mirrors(store: RunStore, root: Path, record: dict[str, Any], report: InvalidationReport) -> None:
    """Carry the mark to every sink that mirrored the run; each says what it did, skipped or could not do."""
    from scoregate.sinks.contract import SinkContext  # the sinks (mlflow, the SDK) load only when used
    from scoregate.sinks.mirror_all import MarkInvalid, mirror_all

    marked = mirror_all(MarkInvalid(store, record), SinkContext(root))
    for name, result in marked.results.items():
        if result.trouble:  # the local mark stands; the sink's sync command carries it later
            report.errors.append(f"{name}: {result.trouble}")
        elif result.report.skipped:
            report.skipped.append(result.report.skipped)
        report.done += result.report.lines
    report.skipped += marked.notes  # a cross-link not made: the marks stand, the next sync links them
