"""A merge takes over what the shards mirrored: the shards sent their items to the run's one experiment already, so
the merged run's mirror record (`runs/<id>/langfuse.json`) adopts what each shard's record confirmed, and the merged
run's mirror sends only what no shard could, then the run-level scores."""

from __future__ import annotations

from collections.abc import Sequence

from scoregate.integrations.langfuse.mirror_state import MirrorState
from scoregate.store.run_store import RunStore


def adopt_shard_mirrors(store: RunStore, shards: Sequence[RunStore], host: str) -> int:
    """Record in the merged run's mirror state every item a shard mirrored to `host`; return how many were added.
    `shards` are the shards' stores under the run's id (`scoregate.store.shards.ShardStore`)."""
    state = MirrorState.load(store, host)
    added = 0
    for shard in shards:
        mirrored = MirrorState.load(shard, host)
        if not mirrored.belongs_to(state.project_id) or not mirrored.counts()[0]:
            continue
        state.project_id = state.project_id or mirrored.project_id
        state.experiment_id = state.experiment_id or mirrored.experiment_id
        state.experiment_url = state.experiment_url or mirrored.experiment_url
        added += state.adopt(mirrored)
    state.save(store)
    return added
