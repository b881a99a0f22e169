"""What the mirror's runner task needs about one run (`MirrorContext`), and the id each stored record is sent under."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scoregate.integrations.langfuse.mirror_state import MirrorState
from scoregate.sinks.langfuse.mirror_batch import PostedBatch
from scoregate.store.records import ItemResult
from scoregate.store.repeats import repeat_key
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from langfuse.model import PromptClient

    from scoregate.catalog.project import Project
    from scoregate.sinks.langfuse.run_items import DatasetRun
    from scoregate.store.record import Manifest, RunSummary


@dataclass
class MirrorContext:
    """Everything the runner's task needs about the run, plus the ids it posted."""

    store: RunStore
    manifest: Manifest
    """The run's manifest, read once for the whole mirror."""
    summary: RunSummary | None
    """The run's summary with its invalidation (`store.invalidation.invalidated`), read once; None for a shard."""
    state: MirrorState
    project_id: str | None
    timestamp: datetime
    project: Project | None = None
    prompts: dict[str, PromptClient] = field(default_factory=dict)
    batch: PostedBatch = field(default_factory=PostedBatch)
    """What was posted since the last confirmation."""
    unordered: bool = False
    dataset_id: str | None = None
    dropped_metadata: list[str] = field(default_factory=list)
    """The first values left out of span attributes (item.key); `dropped` counts them all."""
    dropped: int = 0
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Langfuse score configs by name: a score that fits its config is posted with the config id."""
    dataset_run: DatasetRun | None = None
    """The dataset run scoregate posts the items of (SDK 5 on a server older than v4.59, dataset linked)."""


def mirror_key(result: ItemResult) -> str:
    """The id a stored record is mirrored under: the item id, suffixed `#repeat-N` for repeats 2..K."""
    return repeat_key(result.item_id, result.repeat)
