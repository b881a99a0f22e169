"""Run a pipeline over a dataset with bounded concurrency, streaming each result to the store."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from scoregate.calls.breaker import CircuitBreaker
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.models import DatasetItem
from scoregate.engine.progress import RunProgress
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore


class ItemRunner(Protocol):
    """Anything that turns one dataset item into a result (an ItemPipeline, a repeat or a staged pipeline)."""

    async def run(self, index: int, item: DatasetItem) -> ItemResult:
        """Produce one item's result; failures are data, never exceptions."""
        ...


def pending_items(path: Path, done: set[str], limit: int | None) -> Iterator[tuple[int, DatasetItem]]:
    """Yield (index, item) of the first `limit` items that are not done yet."""
    items = ((index, item) for index, (_line, item) in enumerate(iter_items(path)))
    selected = itertools.islice(items, limit) if limit is not None else items
    return ((index, item) for index, item in selected if item.id not in done)


async def execute(
    pipeline: ItemRunner,
    items: Iterator[tuple[int, DatasetItem]],
    store: RunStore,
    *,
    concurrency: int,
    progress: RunProgress,
    breaker: CircuitBreaker | None = None,
) -> None:
    """Run every item with at most `concurrency` in flight; memory stays bounded by concurrency.

    `breaker` stops the run (CircuitOpen) once its endpoint has failed too many times in a row.
    """

    async def worker() -> None:
        for index, item in items:
            result = await pipeline.run(index, item)
            store.append(result)
            progress.advance(failed=result.error is not None, result=result)
            if breaker is not None:
                breaker.check()

    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
