"""What `scoregate merge` left behind: the merged run, its summary, the shards read and what was missing."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from scoregate.store.record import RunSummary
from scoregate.store.run_store import RunStore

SHOWN_MISSING = 20
"""How many missing item ids a gate's detail names (summary.json's `incomplete` block lists them all)."""


@dataclass
class MergeOutcome:
    """What a merge left behind."""

    run_id: str
    store: RunStore
    summary: dict[str, Any]
    shards: list[str]
    missing_shards: list[str] = field(default_factory=list)
    missing_items: list[str] = field(default_factory=list)
    nothing_to_do: str | None = None
    mirrors: dict[str, str] = field(default_factory=dict)
    mirror_errors: dict[str, str] = field(default_factory=dict)
    mirror_notes: list[str] = field(default_factory=list)
    report: Path | None = None

    @cached_property
    def summary_record(self) -> RunSummary:
        """`summary` as the typed record (validated once)."""
        return RunSummary.model_validate(self.summary)

    @property
    def verdict(self) -> str:
        """`pass`, `fail`, `incomplete` or `no_gates`."""
        return str(self.summary_record.verdict)

    @property
    def missing_text(self) -> str:
        """The missing items named (the first SHOWN_MISSING, then how many more): `a, b and 3 more`."""
        return shown_items(self.missing_items)

    @property
    def incomplete_reason(self) -> str | None:
        """What every gate's detail starts with when items are missing (a terminal says it once), else None."""
        incomplete = self.summary_record.incomplete
        planned = incomplete.planned_items if incomplete is not None else None
        if not self.missing_items or not isinstance(planned, int):
            return None
        return incomplete_reason(self.missing_items, self.missing_shards, planned)


def shown_items(items: list[str]) -> str:
    """The first SHOWN_MISSING of `items`, then how many more."""
    more = f" and {len(items) - SHOWN_MISSING} more" if len(items) > SHOWN_MISSING else ""
    return ", ".join(items[:SHOWN_MISSING]) + more


def incomplete_reason(missing: list[str], missing_shards: list[str], planned: int) -> str:
    """Why every gate of a merge with holes is INCOMPLETE: how many of the planned items are missing, and which."""
    where = f" (shards {', '.join(missing_shards)} missing)" if missing_shards else ""
    shown = shown_items(missing)
    return f"{len(missing)} of {planned} planned items missing{where}: {shown}; merge again once they are there"
