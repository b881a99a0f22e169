"""The items a Langfuse mirror posted since its last confirmation, and how they are confirmed and forgotten.

After each flush (SDK 5's runner flushes at the end of every 500-item chunk, and the score sender posts what it
holds) the mirror reads what the server answered about the batch's scores, traces and run items, records it in
the run's `MirrorState` (a 16-byte digest per confirmed item) and forgets the batch's ids, so a mirror holds one
chunk's ids whatever the run's size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scoregate.integrations.langfuse.mirror_state import ItemMirror, MirrorState

if TYPE_CHECKING:
    from scoregate.integrations.langfuse.delivery import MirrorClient
    from scoregate.sinks.langfuse.report import MirrorReport

RUN_LEVEL = ""
"""The key the run-level scores are posted under."""


@dataclass
class PostedBatch:
    """Score ids posted and item traces placed since the last confirmation."""

    posted: dict[str, list[str]] = field(default_factory=dict)
    """Score ids by item key (`RUN_LEVEL`: the run-level scores)."""
    placed: dict[str, ItemMirror] = field(default_factory=dict)
    """Each posted item's trace and observation ids."""
    unlinked: set[str] = field(default_factory=set)
    """Items whose dataset run item could not be posted (where scoregate posts them): not confirmed."""

    def confirm(
        self, session: MirrorClient, state: MirrorState, report: MirrorReport, run_digest: Callable[[], str]
    ) -> None:
        """After a flush: count the batch's scores, record what the server confirmed of each item in `state`
        (`run_digest()`: the digest of run-level scores all accepted), then forget the batch's ids."""
        session.scores.flush()
        ledger = session.ledger
        every = [i for ids in self.posted.values() for i in ids]
        accepted, rejected = ledger.counts(every)
        report.scores_sent += len(every)
        report.scores_accepted += accepted
        report.scores_rejected += rejected
        for key, ids in self.posted.items():
            confirmed = all(ledger.is_accepted(i) for i in ids)
            if key == RUN_LEVEL:
                if confirmed and state.experiment_id:
                    state.run_scores_digest = run_digest()
                continue
            item = self.placed[key]
            item.trace = item.trace or session.exporter.confirmed(item.trace_id)
            item.scores = confirmed and key not in self.unlinked
            state.record(key, item)
        session.exporter.forget([item.trace_id for item in self.placed.values()])
        session.retimer.forget()
        ledger.forget()
        self.posted.clear()
        self.placed.clear()
        self.unlinked.clear()
