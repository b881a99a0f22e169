"""What the statistics read of a stored run: its id, manifest and summary as values, and its items as a stream.

Analysis opens no run and names no store: a caller opens the run (`scoregate.store.run_store.RunStore` is one
such source) and hands it over, and the items are read one at a time, never all held.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from scoregate.store.records import ItemResult


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
    def manifest(self) -> dict[str, Any]:
        """The run's receipts and options."""

    @property
    def summary(self) -> dict[str, Any] | None:
        """The run's summary, when it has one."""

    def iter_results(self) -> Iterator[ItemResult]:
        """The newest record of each item, in dataset order, streamed."""

    def ordered_results(self) -> OrderedItems:
        """The same records, to read in full or by position."""

    def iter_all_records(self) -> Iterator[ItemResult]:
        """The newest record of each (item, repeat), streamed."""
