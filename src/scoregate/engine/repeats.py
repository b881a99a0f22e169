"""Repeated runs (`run --repeat K`): every item K times; repeat 1 is the run's record, 2..K bypass the cache."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from scoregate.catalog.models import DatasetItem
from scoregate.engine.item import ItemPipeline
from scoregate.engine.runner import ItemRunner
from scoregate.records import ItemResult
from scoregate.store import RunStore


def iter_all_results(store: RunStore) -> Iterator[ItemResult]:
    """Yield the newest record of every (item id, repeat), streaming from disk (see RunStore.iter_all_records)."""
    yield from store.iter_all_records()


def done_by_repeat(store: RunStore, *, retry_errors: bool = False) -> dict[int, set[str]]:
    """Return repeat number → ids of the items already stored for it (the resume point of each repeat);
    with `retry_errors`, only those whose newest record succeeded, every call included."""
    done: dict[int, set[str]] = {}
    for result in iter_all_results(store):
        if not (retry_errors and result.needs_retry):
            done.setdefault(result.repeat, set()).add(result.item_id)
    return done


def failed_records(store: RunStore) -> set[tuple[str, int]]:
    """Return (item id, repeat) of every record whose newest version failed or has a failed call (a judge or a
    stage that could not be reached), in any repeat: what `--retry-errors` runs again."""
    return {(r.item_id, r.repeat) for r in iter_all_results(store) if r.needs_retry}


def repeat_key(item_id: str, repeat: int) -> str:
    """The id a record is mirrored under: the item id, suffixed `#repeat-N` for repeats 2..K."""
    return item_id if repeat == 1 else f"{item_id}#repeat-{repeat}"


@dataclass(frozen=True)
class RepeatPipeline:
    """Runs items through `inner` and stamps each result with a repeat number."""

    inner: ItemPipeline
    repeat: int

    async def run(self, index: int, item: DatasetItem) -> ItemResult:
        """Run the item once more and mark the result as repeat `self.repeat`."""
        result = await self.inner.run(index, item)
        result.repeat = self.repeat
        return result


def pipeline_for_repeat(pipeline: ItemPipeline, repeat: int) -> ItemRunner:
    """Return the pipeline of repeat `repeat`: repeat 1 unchanged; later repeats never read or write the cache."""
    if repeat == 1:
        return pipeline
    return RepeatPipeline(replace(pipeline, caller=pipeline.caller.uncached()), repeat)


def repeats_receipt(repeat: int, *, use_cache: bool) -> dict[str, Any]:
    """The receipt of a repeated run: how many repeats, and how each used the response cache (empty for one)."""
    if repeat <= 1:
        return {}
    first = "reads and writes the response cache" if use_cache else "does not use the cache (--no-cache)"
    return {
        "repeats": {
            "count": repeat,
            "cache": f"repeat 1 {first}; repeats 2..{repeat} bypass it (never read, never written)",
        }
    }
