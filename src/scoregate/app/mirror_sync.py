"""`scoregate mlflow-sync` and `langfuse-sync`: mirror one stored run to one sink again, through `mirror_all`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scoregate.store.lock import SYNC_HINT, RunLock
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.sinks.mirror_all import MirrorOutcome


def sync_stored_run(root: Path, run_id: str, sink: str, *, item_rows: bool = False) -> MirrorOutcome:
    """Mirror stored run `run_id` to sink `sink` (and hand the links it made to the other sinks), holding the
    run's lock; the caller raises what went wrong with `outcome.raise_for(sink)`."""
    from scoregate.sinks.contract import SinkContext  # the sinks load only when used
    from scoregate.sinks.mirror_all import Mirror, mirror_all

    store = RunStore.open(root / "runs", run_id)
    with RunLock(store.directory, hint=SYNC_HINT):
        return mirror_all(Mirror(store), SinkContext(root, item_rows=item_rows), only=sink)
