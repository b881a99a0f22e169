"""A throwaway tracker for the sink contract's tests: every call appends one JSON line to `<project>/tracker.jsonl`.

It is what a new tracker is: this one file (a `RunSink`) and one registry line
(`"jsonl": "support.jsonl_sink:JsonlSink"` in `scoregate.sinks.registry.SINKS`). `JSONL_SINK=off` switches it
off. It has two optional abilities (`scoregate.sinks.contract`), each one method here: it streams a shard's items
(`mirror_shard`) and adopts the shards at merge (`adopt_shards`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from scoregate.sinks.contract import SinkContext, SinkReport
from scoregate.store.run_store import RunStore

FILE = "tracker.jsonl"


class JsonlSink:
    """Mirror a run as one JSON line: its id, verdict and score means; invalidation and forgetting as lines too."""

    name = "jsonl"

    def __init__(self, context: SinkContext) -> None:
        self.context = context
        self.path = context.project_root / FILE

    def configured(self) -> str | None:
        """Off when JSONL_SINK=off."""
        return "JSONL_SINK is off" if os.environ.get("JSONL_SINK") == "off" else None

    def mirror(self, store: RunStore) -> SinkReport:
        """Append the run's verdict and score means (the run's record as every sink of this mirror reads it)."""
        summary = self.context.record(store).summary
        means = {key: stats.mean for key, stats in summary.scores.items()} if summary else {}
        self._write("mirror", store, verdict=summary.verdict if summary else None, means=means)
        return SinkReport(
            link=f"{self.path}#{store.run_id}",
            links={"jsonl.file": str(self.path)},
            lines=[f"jsonl: run {store.run_id} appended to {self.path}"],
        )

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Append the invalidation record."""
        self._write("mark_invalid", store, reason=record["invalid_reason"])
        return SinkReport(lines=[f"jsonl: run {store.run_id} marked invalid in {self.path}"])

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Append the items to send again."""
        self._write("forget", store, items=sorted(item_ids))

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Append the other mirrors' links."""
        self._write("link", store, links=dict(links))

    def mirror_shard(self, store: RunStore) -> SinkReport:
        """Append the shard's name (a shard's store carries the id of the run it belongs to)."""
        self._write("mirror_shard", store, shard=store.directory.name)
        return SinkReport(lines=[f"jsonl: shard {store.directory.name} of run {store.run_id} appended"])

    def adopt_shards(self, store: RunStore, shards: Sequence[RunStore]) -> SinkReport:
        """Append the names of the shards the merged run takes over."""
        self._write("adopt_shards", store, shards=[shard.directory.name for shard in shards])
        return SinkReport()

    def _write(self, call: str, store: RunStore, **data: Any) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"call": call, "run_id": store.run_id, **data}) + "\n")


def calls(root: os.PathLike[str] | str) -> list[dict[str, Any]]:
    """Every call the sink received in project `root`, oldest first."""
    path = os.path.join(root, FILE)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
