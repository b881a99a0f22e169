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

import os
from typing import TYPE_CHECKING, Any

from scoregate.errors import ScoregateError
from scoregate.store.run_store import RunStore, read_run_json

if TYPE_CHECKING:
    from scoregate.store.record import RunSummary

INVALIDATION_FILE = "invalidation.json"
VALID_TAG = "scoregate.valid"
REASON_TAG = "scoregate.invalid_reason"
SUPERSEDED_TAG = "scoregate.superseded_by"


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


def invalidated(store: RunStore, summary: RunSummary) -> RunSummary:
    """The run's summary with its invalidation fields (if it was invalidated), as every mirror must carry it."""
    record = invalidation_of(store)
    return summary if record is None else summary.model_copy(update=record)


def invalidation_tags(record: dict[str, Any] | None) -> dict[str, str]:
    """The MLflow tags marking an invalidated run (none for a valid run)."""
    if record is None:
        return {}
    tags = {VALID_TAG: "false", REASON_TAG: str(record.get("invalid_reason"))[:5000]}
    if record.get("superseded_by"):
        tags[SUPERSEDED_TAG] = str(record["superseded_by"])
    return tags


def describe_invalidation(record: dict[str, Any]) -> str:
    """`invalidated <date>: <reason>[; superseded by <run>]`."""
    text = f"invalidated {str(record.get('invalidated_at', ''))[:10]}: {record.get('invalid_reason')}"
    return text + (f"; superseded by {record['superseded_by']}" if record.get("superseded_by") else "")


def why_invalid(store: RunStore) -> str | None:
    """Why a run must not be used (its invalidation), or None."""
    record = invalidation_of(store)
    return None if record is None else describe_invalidation(record)


def refuse_invalid(store: RunStore, doing: str) -> None:
    """Raise a clear error when the run was invalidated (compare, rank, hard cases)."""
    record = invalidation_of(store)
    if record is None:
        return
    better = record.get("superseded_by")
    raise ScoregateError(
        f"cannot {doing} run {store.run_id}: it was {describe_invalidation(record)}",
        hint=f"use {better} instead" if better else "use a valid run (`scoregate runs list` marks invalid ones)",
    )
