"""Invalidating a run: it stays in the store, marked invalid, and every command that would trust it refuses or skips it.

`runs/<run_id>/invalidation.json` is the record (`valid: false`, `invalid_reason`, `invalidated_at`,
`superseded_by`); the same fields are copied into summary.json, set as MLflow tags on the mirrored run
(`scoregate.valid`, `scoregate.invalid_reason`, `scoregate.superseded_by`) and sent to Langfuse as the run's
`run_valid` score with that metadata. A run invalidated before it was mirrored (or before it finished) gets
the same marks from its first mirror, and a resume keeps them in the summary it writes. Compare, rank, hard
cases refuse an invalid run; the regression gate skips it as a baseline and promotion skips it as evidence,
each saying why.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.run_lock import RunLock
from scoregate.store import RunStore, read_run_json

INVALIDATION_FILE = "invalidation.json"
VALID_TAG = "scoregate.valid"
REASON_TAG = "scoregate.invalid_reason"
SUPERSEDED_TAG = "scoregate.superseded_by"
INVALIDATE_HINT = "wait for the run to finish (or stop it), then invalidate it; its summary is still being written"


def invalidation_of(store: RunStore) -> dict[str, Any] | None:
    """The run's invalidation record, or None for a valid run."""
    path = store.directory / INVALIDATION_FILE
    if not os.path.lexists(path):
        return None
    return read_run_json(
        path,
        hint=f"mark the run again (it rewrites {INVALIDATION_FILE}): "
        f"`scoregate runs invalidate {store.run_id} --reason ...`",
    )


def with_invalidation(store: RunStore, summary: dict[str, Any]) -> dict[str, Any]:
    """`summary` with the run's invalidation fields (if it was invalidated): what every mirror must carry."""
    record = invalidation_of(store)
    return summary if record is None else {**summary, **record}


def invalidation_tags(record: dict[str, Any] | None) -> dict[str, str]:
    """The MLflow tags marking an invalidated run (none for a valid run)."""
    if record is None:
        return {}
    tags = {VALID_TAG: "false", REASON_TAG: str(record.get("invalid_reason"))[:5000]}
    if record.get("superseded_by"):
        tags[SUPERSEDED_TAG] = str(record["superseded_by"])
    return tags


def describe(record: dict[str, Any]) -> str:
    """`invalidated <date>: <reason>[; superseded by <run>]`."""
    text = f"invalidated {str(record.get('invalidated_at', ''))[:10]}: {record.get('invalid_reason')}"
    return text + (f"; superseded by {record['superseded_by']}" if record.get("superseded_by") else "")


def why_invalid(store: RunStore) -> str | None:
    """Why a run must not be used (its invalidation), or None."""
    record = invalidation_of(store)
    return None if record is None else describe(record)


def refuse_invalid(store: RunStore, doing: str) -> None:
    """Raise a clear error when the run was invalidated (compare, rank, hard cases)."""
    record = invalidation_of(store)
    if record is None:
        return
    better = record.get("superseded_by")
    raise ScoregateError(
        f"cannot {doing} run {store.run_id}: it was {describe(record)}",
        hint=f"use {better} instead" if better else "use a valid run (`scoregate runs list` marks invalid ones)",
    )


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
        _mark_mlflow(store, root, record, report)
        _mark_langfuse(store, root, report)
    return report


def _mark_mlflow(store: RunStore, root: Path, record: dict[str, Any], report: InvalidationReport) -> None:
    mlflow_run_id = store.links.get("mlflow_run_id")
    if not mlflow_run_id:
        report.skipped.append("mlflow: the run was not mirrored (`scoregate mlflow-sync` would carry the mark)")
        return
    from mlflow.tracking import MlflowClient  # mlflow imports slowly; load it only when used

    from scoregate.sinks.mlflow_sink import tracking_uri

    try:
        client = MlflowClient(tracking_uri=tracking_uri(root))
        for key, value in invalidation_tags(record).items():
            client.set_tag(mlflow_run_id, key, value)
    except Exception as exc:  # the local mark stands; the mirror can be redone
        report.errors.append(f"mlflow: {type(exc).__name__}: {exc}")
        return
    report.done.append(f"mlflow: run {mlflow_run_id} tagged {VALID_TAG}=false")


def _mark_langfuse(store: RunStore, root: Path, report: InvalidationReport) -> None:
    from scoregate.sinks.langfuse.client import LangfuseSettings

    if not store.links.get("langfuse_experiment_id"):
        report.skipped.append("langfuse: the run was not mirrored")
        return
    if LangfuseSettings.from_env() is None:
        report.skipped.append("langfuse: not configured (set LANGFUSE_* and run `scoregate langfuse-sync` to mark it)")
        return
    from scoregate.catalog.project import load_project
    from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse

    try:
        mirrored = mirror_run_to_langfuse(store, load_project(root))
    except Exception as exc:  # the local mark stands; `scoregate langfuse-sync RUN` redoes it
        report.errors.append(f"langfuse: {type(exc).__name__}: {exc}")
        return
    if mirrored.complete:
        report.done.append("langfuse: the run's `run_valid` score is `invalid`, with the reason in its metadata")
    else:
        report.errors.append("langfuse: " + "; ".join(mirrored.problems))
