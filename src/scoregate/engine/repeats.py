"""Repeated runs (`run --repeat K`): every item K times; repeat 1 is the run's record, 2..K bypass the cache."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from scoregate.catalog.models import DatasetItem
from scoregate.engine.item import ItemPipeline
from scoregate.engine.runner import ItemRunner
from scoregate.store.records import ItemResult


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
