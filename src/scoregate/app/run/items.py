"""The items step: how a run's items are run, chosen once per run by its way (`run_way.choose_items`): every item
of each repeat, one shard's items, or a stop-early run's batches in their seeded order. A shard ends differently:
no summary, gates, report or MLflow (`scoregate merge` does them), so its way of running items also ends it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from scoregate.app.run.budget import BudgetExceeded, BudgetWatch

if TYPE_CHECKING:
    from scoregate.app.run.finished_run import FinishedRun
    from scoregate.app.run.run_options import RunOutcome
    from scoregate.app.run.stop_early import StopEarlyPlan
    from scoregate.calls.breaker import CircuitBreaker
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.engine.item import ItemPipeline
    from scoregate.engine.progress import RunProgress
    from scoregate.store.run_store import RunStore

__all__ = ["AllItems", "ItemRun", "ItemsStep", "ShardItems", "StopEarlyItems"]


@dataclass(frozen=True)
class ItemRun:
    """What the items step runs with: the pipeline, where the results go, what is done per repeat."""

    pipeline: ItemPipeline
    plan: ExperimentPlan
    store: RunStore
    done_by: dict[int, set[str]]
    """Per repeat (1..K), the item ids already stored (a resume skips them)."""
    limit: int | None
    concurrency: int
    progress: RunProgress
    watch: BudgetWatch
    breaker: CircuitBreaker | None


class ItemsStep(Protocol):
    """One way of running a run's items."""

    @property
    def members(self) -> frozenset[str] | None:
        """The ids of the items this run owns (a shard's), or None: every item."""

    async def run(self, items: ItemRun) -> None:
        """Run the items not yet stored."""

    def finish(self, run: FinishedRun) -> RunOutcome:
        """End the run once its items are done and stored; return its outcome."""


@dataclass(frozen=True)
class AllItems:
    """Every item (of the run's `--limit`), each repeat in turn; the run then goes through `FINISH_STEPS`."""

    members: frozenset[str] | None = None

    async def run(self, items: ItemRun) -> None:
        """Run each repeat's pending items, within the time budget."""
        from scoregate.app.run.shards import shard_items
        from scoregate.engine.repeats import pipeline_for_repeat
        from scoregate.engine.runner import execute, pending_items

        path = items.plan.dataset.path
        for repeat in sorted(items.done_by):
            async with _time_budget(items.watch):
                await execute(
                    pipeline_for_repeat(items.pipeline, repeat),
                    shard_items(pending_items(path, items.done_by[repeat], items.limit), self.members),
                    items.store,
                    concurrency=items.concurrency,
                    progress=items.progress,
                    breaker=items.breaker,
                )

    def finish(self, run: FinishedRun) -> RunOutcome:
        """Summary, report, post-run steps, mirrors (`finish_steps.FINISH_STEPS`)."""
        from scoregate.app.run.finish_steps import finish_run

        return finish_run(run)


@dataclass(frozen=True)
class ShardItems(AllItems):
    """One shard's items; it ends at `shards.finish_shard` (its telemetry and its items' traces, no summary)."""

    def finish(self, run: FinishedRun) -> RunOutcome:
        """End the shard: `scoregate merge` summarises the run once every shard is done."""
        from scoregate.app.run.shards import finish_shard

        return finish_shard(run.store, run.project, run.options)


@dataclass(frozen=True)
class StopEarlyItems(AllItems):
    """A stop-early run: the items in a seeded order, a batch at a time, until the gate's question is settled."""

    stop: StopEarlyPlan | None = None

    async def run(self, items: ItemRun) -> None:
        """Run batches until the stop-early rule stops the run (its decision goes into the manifest)."""
        from scoregate.app.run.stop_early import run_stop_early

        assert self.stop is not None
        await run_stop_early(
            self.stop,
            items.pipeline,
            items.plan,
            items.store,
            concurrency=items.concurrency,
            progress=items.progress,
            breaker=items.breaker,
        )


@asynccontextmanager
async def _time_budget(watch: BudgetWatch) -> AsyncIterator[None]:
    """Cancel the items in flight when the time budget runs out (they are not stored: a resume redoes them)."""
    left = watch.seconds_left()
    if left is None:
        yield
        return
    try:
        async with asyncio.timeout(left):
            yield
    except TimeoutError:
        raise BudgetExceeded(watch.out_of_time()) from None
