"""Invalidating a run (`scoregate runs invalidate`): the local mark, then the MLflow tags and the Langfuse score."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.store.invalidation import INVALIDATION_FILE, VALID_TAG, invalidation_of, invalidation_tags
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
        _mark_mlflow(store, root, record, report)
        _mark_langfuse(store, root, report)
    return report


def _mark_mlflow(store: RunStore, root: Path, record: dict[str, Any], report: InvalidationReport) -> None:
    mlflow_run_id = store.links.get("mlflow_run_id")
    if not mlflow_run_id:
        report.skipped.append("mlflow: the run was not mirrored (`scoregate mlflow-sync` would carry the mark)")
        return
    from mlflow.tracking import MlflowClient  # mlflow imports slowly; load it only when used

    from scoregate.sinks.mlflow.client import tracking_uri

    try:
        client = MlflowClient(tracking_uri=tracking_uri(root))
        for key, value in invalidation_tags(record).items():
            client.set_tag(mlflow_run_id, key, value)
    except Exception as exc:  # the local mark stands; the mirror can be redone
        report.errors.append(f"mlflow: {type(exc).__name__}: {exc}")
        return
    report.done.append(f"mlflow: run {mlflow_run_id} tagged {VALID_TAG}=false")


def _mark_langfuse(store: RunStore, root: Path, report: InvalidationReport) -> None:
    from scoregate.integrations.langfuse.client import LangfuseSettings

    if not store.links.get("langfuse_experiment_id"):
        report.skipped.append("langfuse: the run was not mirrored")
        return
    if LangfuseSettings.from_env() is None:
        report.skipped.append("langfuse: not configured (set LANGFUSE_* and run `scoregate langfuse-sync` to mark it)")
        return
    from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse
    from scoregate.tracks.project import load_project

    try:
        mirrored = mirror_run_to_langfuse(store, load_project(root))
    except Exception as exc:  # the local mark stands; `scoregate langfuse-sync RUN` redoes it
        report.errors.append(f"langfuse: {type(exc).__name__}: {exc}")
        return
    if mirrored.complete:
        report.done.append("langfuse: the run's `run_valid` score is `invalid`, with the reason in its metadata")
    else:
        report.errors.append("langfuse: " + "; ".join(mirrored.problems))
