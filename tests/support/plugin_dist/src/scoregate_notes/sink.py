"""The sink `notes`: each finished run becomes one JSON line in `<project>/notes.jsonl`."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from scoregate.sinks.contract import SinkContext, SinkReport
from scoregate.store.run_store import RunStore


class NotesSink:
    """Mirror a run as one JSON line (its id, verdict and score means); off when NOTES_SINK=off."""

    name = "notes"

    def __init__(self, context: SinkContext) -> None:
        self.path = context.project_root / "notes.jsonl"
        self.context = context

    def configured(self) -> str | None:
        """Why the sink is off, or None."""
        return "NOTES_SINK is off" if os.environ.get("NOTES_SINK") == "off" else None

    def mirror(self, store: RunStore) -> SinkReport:
        """Append the run's verdict and score means."""
        summary = self.context.record(store).summary
        means = {key: stats.mean for key, stats in summary.scores.items()} if summary else {}
        self._write("mirror", store, verdict=summary.verdict if summary else None, means=means)
        return SinkReport(link=str(self.path), lines=[f"notes: run {store.run_id} noted in {self.path}"])

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Append the invalidation."""
        self._write("mark_invalid", store, reason=record.get("invalid_reason"))
        return SinkReport(lines=[f"notes: run {store.run_id} marked invalid in {self.path}"])

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Nothing to forget: every mirror appends the whole run again."""

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Append the other mirrors' links."""
        self._write("link", store, links=dict(links))

    def _write(self, call: str, store: RunStore, **data: Any) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"call": call, "run_id": store.run_id, **data}) + "\n")
