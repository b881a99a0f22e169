"""What the statistics read of a stored run: its id, manifest and summary as values, and its items as a stream.

Analysis opens no run and names no store: a caller opens the run (`scoregate.store.run_store.RunStore` is one
such source) and hands it over, and the items are read one at a time, never all held.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from scoregate.store.records import ItemResult

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, Receipts, RunSummary


class OrderedItems(Protocol):
    """A run's newest record of each item in dataset order: read in full, or again by position."""

    def __len__(self) -> int:
        """How many items."""

    def __iter__(self) -> Iterator[ItemResult]:
        """Every item, in dataset order."""

    def at(self, positions: Sequence[int]) -> Iterator[ItemResult]:
        """The items at `positions` (0 = the first in dataset order), in the order given."""


class RunSource(Protocol):
    """One stored run, as the statistics read it."""

    @property
    def run_id(self) -> str:
        """The run's id."""

    @property
    def manifest_record(self) -> Manifest:
        """The run's receipts and options (read from its file each time: read once, pass it down)."""

    @property
    def summary_record(self) -> RunSummary | None:
        """The run's summary, when it has one (read from its file each time: read once, pass it down)."""

    def iter_results(self) -> Iterator[ItemResult]:
        """The newest record of each item, in dataset order, streamed."""

    def ordered_results(self) -> OrderedItems:
        """The same records, to read in full or by position."""

    def iter_all_records(self) -> Iterator[ItemResult]:
        """The newest record of each (item, repeat), streamed."""


def recorded_gates(receipts: Receipts) -> list[dict[str, Any]]:
    """The gates a run recorded in its receipts (each as its gate spec: name, metric, stat, op, threshold)."""
    return [gate for gate in receipts.gates if isinstance(gate, dict)] if isinstance(receipts.gates, list) else []
