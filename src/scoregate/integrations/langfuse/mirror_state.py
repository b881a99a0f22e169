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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from scoregate.integrations.langfuse.delivery import trace_id_for
from scoregate.store.run_store import RunStore
from scoregate.support.key_digests import KeyDigests

if TYPE_CHECKING:
    from scoregate.store.record import Manifest

STATE_FILE = "langfuse.json"
FORMAT = 2
"""2: confirmed items as digests (`done`); 1 (no `format`): every item under `items`, read as well."""
DIGEST_FIELD = "blake2b_16_base64"
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


def score_timestamp(manifest: Manifest) -> datetime:
    """Return the fixed time every score of the run carries (its start): Langfuse upserts on id, name and day."""
    started = manifest.started_at
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
    """The per-run mirror record for one Langfuse project (host and project id).

    An item whose trace and scores the server confirmed, under the trace id derived from run and item (every
    item of an ordered runner), is kept as a 16-byte digest of its key in `done`; only the others (trace
    confirmed but a score not, or a trace id the runner did not derive) keep their ids in `items`. So the record
    of a 100,000-item run holds 1.6 MB, not a dict of 100,000 objects.
    """

    host: str
    run_id: str = ""
    project_id: str | None = None
    experiment_id: str | None = None
    experiment_url: str | None = None
    other_experiment_ids: list[str] = field(default_factory=list)
    items: dict[str, ItemMirror] = field(default_factory=dict)
    done: KeyDigests = field(default_factory=KeyDigests)
    probe_trace: str | None = None
    """The trace id of one confirmed item: checked to see whether the server still has the run."""
    run_scores_digest: str | None = None
    updated_at: str | None = None

    @classmethod
    def load(cls, store: RunStore, host: str) -> MirrorState:
        """Return the state recorded for `host`, or an empty one (a run never mirrored there)."""
        path = store.directory / STATE_FILE
        if not path.is_file():
            return cls(host=host, run_id=store.run_id)
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("host") != host:
            return cls(host=host, run_id=store.run_id)
        state = cls(
            host=host,
            run_id=store.run_id,
            **{k: raw.get(k) for k in ("project_id", "experiment_id", "experiment_url", "run_scores_digest")},
            other_experiment_ids=list(raw.get("other_experiment_ids") or []),
            probe_trace=raw.get("probe_trace"),
            updated_at=raw.get("updated_at"),
        )
        done = raw.get("done")
        if isinstance(done, dict):
            state.done = KeyDigests.from_text(str(done.get(DIGEST_FIELD, "")))
        for key, value in (raw.get("items") or {}).items():  # every item, in records written before `done`
            state.record(key, ItemMirror(**value))
        return state

    def belongs_to(self, project_id: str | None) -> bool:
        """True when this record is about `project_id` (a record without one predates the key: trusted)."""
        return self.project_id is None or project_id is None or self.project_id == project_id

    def forget(self, project_id: str | None) -> None:
        """Drop everything recorded: the run is mirrored to this project from scratch (same derived ids)."""
        self.project_id = project_id
        self.experiment_id = self.experiment_url = self.run_scores_digest = self.probe_trace = None
        self.other_experiment_ids = []
        self.items = {}
        self.done = KeyDigests()

    def record(self, key: str, item: ItemMirror) -> None:
        """Record what the server confirmed of item `key`: nothing kept when its trace is not confirmed (the next
        sync sends it again, under the same ids), a digest when everything is, else its ids."""
        self.items.pop(key, None)
        self.done.discard(key)
        if not item.trace:
            return
        self.probe_trace = self.probe_trace or item.trace_id
        if item.scores and item.trace_id == trace_id_for(trace_seed(self.run_id, key)):
            self.done.add(key)
        else:
            self.items[key] = item

    def adopt(self, other: MirrorState) -> int:
        """Take over what `other` (a shard's record of the same run) confirmed and this one lacks; return how many
        items it added."""
        settled = [key for key in self.items if key in other.done]
        for key in settled:  # all confirmed there: kept as a digest only
            del self.items[key]
        added = self.done.update(other.done) - len(settled)
        for key, item in other.items.items():
            if item.trace and not self.traced(key):
                self.record(key, item)
                added += 1
        self.probe_trace = self.probe_trace or other.probe_trace
        return added

    def save(self, store: RunStore) -> None:
        """Write the state atomically."""
        self.updated_at = datetime.now(UTC).isoformat()
        record = {
            "format": FORMAT,
            "host": self.host,
            "project_id": self.project_id,
            "experiment_id": self.experiment_id,
            "experiment_url": self.experiment_url,
            "other_experiment_ids": self.other_experiment_ids,
            "run_scores_digest": self.run_scores_digest,
            "updated_at": self.updated_at,
            "probe_trace": self.probe_trace,
            "items": {key: asdict(item) for key, item in self.items.items()},
        }
        head = json.dumps(record, indent=2, ensure_ascii=False).removesuffix("\n}")
        path = store.directory / STATE_FILE
        tmp = path.with_suffix(".json.tmp")
        with tmp.open("w", encoding="utf-8") as out:  # the digests last, in pieces (their text: 2.1 MB per 100,000)
            out.write(f'{head},\n  "done": {{"count": {len(self.done)}, "{DIGEST_FIELD}": "')
            self.done.write_text(out)
            out.write('"}\n}')
        os.replace(tmp, path)

    def confirmed_trace(self) -> str | None:
        """Return the trace id of one item the server confirmed (to check the server still has it), if any."""
        return self.probe_trace

    def traced(self, key: str) -> bool:
        """True when the item's trace is confirmed."""
        item = self.items.get(key)
        return item.trace if item is not None else key in self.done

    def is_done(self, key: str) -> bool:
        """True when the item's trace and all its scores are confirmed."""
        item = self.items.get(key)
        return item.trace and item.scores if item is not None else key in self.done

    def trace_of(self, key: str) -> str | None:
        """The confirmed trace id of item `key`, or None."""
        item = self.items.get(key)
        if item is not None:
            return item.trace_id if item.trace else None
        return trace_id_for(trace_seed(self.run_id, key)) if key in self.done else None

    def counts(self) -> tuple[int, int]:
        """Return (items whose trace is confirmed, items whose trace and scores are)."""
        traced = len(self.done) + sum(1 for i in self.items.values() if i.trace)
        return traced, len(self.done) + sum(1 for i in self.items.values() if i.trace and i.scores)


def recorded_state(store: RunStore) -> MirrorState | None:
    """The run's mirror record, for the host it names; None when the run was never mirrored."""
    path = store.directory / STATE_FILE
    if not path.is_file():
        return None
    return MirrorState.load(store, str(json.loads(path.read_text(encoding="utf-8")).get("host")))


def confirmed_traces(run_dir: Path) -> Callable[[str], str | None]:
    """Return a lookup item key → the trace id the run's Langfuse mirror confirmed (None: no confirmed trace)."""
    state = recorded_state(RunStore(run_dir))
    return state.trace_of if state is not None else lambda _key: None


def forget_items(store: RunStore, keys: set[str]) -> None:
    """Mark items as not yet mirrored, so their newer records are sent again (same ids: upserts)."""
    state = recorded_state(store)
    if state is None or not keys:
        return
    for key in keys:
        state.items.pop(key, None)
        state.done.discard(key)
    state.run_scores_digest = None
    state.save(store)
