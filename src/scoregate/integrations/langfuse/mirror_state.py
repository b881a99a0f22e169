"""What a run's Langfuse mirror has delivered so far (`runs/<id>/langfuse.json`), and the ids it uses.

Ids are derived, never random: a trace per item from `scoregate:<run>/item/<item>`, a score id per
(run, item, key), an experiment id per run. A mirror repeated from the same run store therefore
addresses the same objects; the state file says which of them the server has confirmed, so a
repeated `langfuse-sync` sends only what is missing.

The Langfuse mirror (`scoregate.sinks.langfuse`) writes the file; the feedback commands (`scores import`,
`annotate queue`) read the confirmed trace ids from it, so it lives below both.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.store.run_store import RunStore

STATE_FILE = "langfuse.json"
_NAMESPACE = uuid.UUID("6c0f5d3e-5a0e-4f51-9a53-5c0e6a7d2b11")


def trace_seed(run_id: str, item_id: str) -> str:
    """Return the seed of an item's trace id (see `delivery.trace_id_for`)."""
    return f"scoregate:{run_id}/item/{item_id}"


def item_score_id(run_id: str, item_id: str, name: str) -> str:
    """Return the fixed id of score `name` of one item of one run."""
    return str(uuid.uuid5(_NAMESPACE, f"{run_id}/item/{item_id}/{name}"))


def run_score_id(run_id: str, name: str) -> str:
    """Return the fixed id of run-level score `name`."""
    return str(uuid.uuid5(_NAMESPACE, f"{run_id}/run/{name}"))


def experiment_id_for(run_id: str) -> str:
    """Return the run's experiment id: 16 hex digits, like the ids the SDK makes."""
    return hashlib.sha256(f"scoregate:{run_id}/experiment".encode()).hexdigest()[:16]


def score_timestamp(manifest: dict[str, Any]) -> datetime:
    """Return the fixed time every score of the run carries (its start): Langfuse upserts on id, name and day."""
    started = manifest.get("started_at")
    moment = datetime.fromisoformat(started) if started else datetime(1970, 1, 1, tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass
class ItemMirror:
    """One item's trace and whether the server confirmed the trace and every score of it."""

    trace_id: str
    observation_id: str | None
    trace: bool = False
    scores: bool = False


@dataclass
class MirrorState:
    """The per-run mirror record for one Langfuse project (host and project id)."""

    host: str
    project_id: str | None = None
    experiment_id: str | None = None
    experiment_url: str | None = None
    other_experiment_ids: list[str] = field(default_factory=list)
    items: dict[str, ItemMirror] = field(default_factory=dict)
    run_scores_digest: str | None = None
    updated_at: str | None = None

    @classmethod
    def load(cls, store: RunStore, host: str) -> MirrorState:
        """Return the state recorded for `host`, or an empty one (a run never mirrored there)."""
        path = store.directory / STATE_FILE
        if not path.is_file():
            return cls(host=host)
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("host") != host:
            return cls(host=host)
        raw["items"] = {k: ItemMirror(**v) for k, v in raw.get("items", {}).items()}
        return cls(**raw)

    def belongs_to(self, project_id: str | None) -> bool:
        """True when this record is about `project_id` (a record without one predates the key: trusted)."""
        return self.project_id is None or project_id is None or self.project_id == project_id

    def forget(self, project_id: str | None) -> None:
        """Drop everything recorded: the run is mirrored to this project from scratch (same derived ids)."""
        self.project_id = project_id
        self.experiment_id = self.experiment_url = self.run_scores_digest = None
        self.other_experiment_ids = []
        self.items = {}

    def save(self, store: RunStore) -> None:
        """Write the state atomically."""
        self.updated_at = datetime.now(UTC).isoformat()
        path = store.directory / STATE_FILE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    def confirmed_trace(self) -> str | None:
        """Return the trace id of one item the server confirmed (to check the server still has it), if any."""
        return next((i.trace_id for i in self.items.values() if i.trace), None)

    def is_done(self, item_id: str) -> bool:
        """True when the item's trace and all its scores are confirmed."""
        item = self.items.get(item_id)
        return item is not None and item.trace and item.scores


def confirmed_traces(run_dir: Path) -> dict[str, str]:
    """Return item id → trace id for every item of the run whose trace the Langfuse mirror confirmed."""
    path = run_dir / STATE_FILE
    state = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {k: v["trace_id"] for k, v in state.get("items", {}).items() if v.get("trace")}


def forget_items(store: RunStore, item_ids: set[str]) -> None:
    """Mark items as not yet mirrored, so their newer records are sent again (same ids: upserts)."""
    path = store.directory / STATE_FILE
    if not item_ids or not path.is_file():
        return
    state = json.loads(path.read_text(encoding="utf-8"))
    state["items"] = {k: v for k, v in state.get("items", {}).items() if k not in item_ids}
    state["run_scores_digest"] = None
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(state, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
