"""Langfuse as a `RunSink`: one Langfuse experiment per scoregate run, mirrored exactly once.

On only when LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST are set. What the server confirmed is
recorded in `runs/<id>/langfuse.json` (`scoregate.integrations.langfuse.mirror_state`); the Langfuse SDK is
imported only when a mirror runs, and nothing heavy when Langfuse is off (a run only asks `configured()`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scoregate.integrations.langfuse.client import NOT_CONFIGURED, LangfuseSettings
from scoregate.sinks.contract import SinkContext, SinkReport

if TYPE_CHECKING:
    from scoregate.sinks.langfuse.experiment_mirror import MirrorReport
    from scoregate.store.run_store import RunStore

MARKED = "langfuse: the run's `run_valid` score is `invalid`, with the reason in its metadata"


class LangfuseSink:
    """Mirror runs to Langfuse as experiments; the other mirrors' ids go into the experiment's metadata. Its
    abilities: it checks the server before a run, streams a shard's items, adopts the shards' mirrors at merge and
    counts the server's items."""

    name = "langfuse"
    title = "Langfuse"
    resync_command = "scoregate langfuse-sync {run_id}"

    def __init__(self, context: SinkContext) -> None:
        self.context = context

    def configured(self) -> str | None:
        """Off unless the three LANGFUSE_* variables are set."""
        return NOT_CONFIGURED if LangfuseSettings.from_env() is None else None

    def mirror(self, store: RunStore) -> SinkReport:
        """Send what the server has not confirmed yet; a run not fully mirrored is the report's problem."""
        return _as_sink_report(self._mirrored(store))

    def check_before_run(self) -> None:
        """Refuse a server too old for the mirror before the run's first model call (one that does not answer now
        is not refused)."""
        from scoregate.integrations.langfuse.server_generation import check_before_run

        check_before_run(LangfuseSettings.from_env())

    def mark_invalid(self, store: RunStore, record: Mapping[str, Any]) -> SinkReport:
        """Mirror the run again: its run-level `run_valid` score becomes `invalid` with the reason."""
        if not store.links.get("langfuse_experiment_id"):
            return SinkReport(skipped="langfuse: the run was not mirrored")
        if self.configured() is not None:
            return SinkReport(
                skipped="langfuse: not configured (set LANGFUSE_* and run `scoregate langfuse-sync` to mark it)"
            )
        mirrored = self._mirrored(store)
        report = _as_sink_report(mirrored)
        report.lines = [MARKED] if mirrored.complete else []
        return report

    def forget(self, store: RunStore, item_ids: set[str]) -> None:
        """Drop the items from the mirror record: the next mirror sends their newer records under the same ids."""
        from scoregate.integrations.langfuse.mirror_state import forget_items  # httpx, numpy: only when used

        forget_items(store, item_ids)

    def link(self, store: RunStore, links: Mapping[str, str]) -> None:
        """Nothing to do afterwards: the experiment's metadata and its `mlflow_run_id` score carry the MLflow run
        id, read from the run's links when the experiment is mirrored (MLflow mirrors first)."""

    def mirror_shard(self, store: RunStore) -> SinkReport:
        """Send a shard's items' traces and item scores to the run's one experiment (the merge sends the rest)."""
        return self.mirror(store)  # a shard's manifest names its shard: only its items are sent

    def adopt_shards(self, store: RunStore, shards: Sequence[RunStore]) -> SinkReport:
        """Take over in the merged run's mirror record what the shards' mirrors confirmed (nothing is sent twice)."""
        from scoregate.sinks.langfuse.shard_adoption import adopt_shard_mirrors

        settings = LangfuseSettings.from_env()
        if settings is not None:
            adopt_shard_mirrors(store, shards, settings.host)
        return SinkReport()

    def missing_items(self, report: SinkReport) -> str | None:
        """How many of the run's items the experiment lacks after the mirror that gave `report`, or None."""
        mirrored = report.detail
        if mirrored is None or mirrored.items_confirmed == mirrored.items_total:
            return None
        return f"the experiment holds {mirrored.items_confirmed} of the run's {mirrored.items_total} items"

    def _mirrored(self, store: RunStore) -> MirrorReport:
        from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse  # the SDK: only when used

        return mirror_run_to_langfuse(store, self.context.project(), record=self.context.record(store))


def _as_sink_report(mirrored: MirrorReport) -> SinkReport:
    """The contract's report of a Langfuse mirror: its lines, the experiment URL, and the problems when any (as
    `problem` alone: every caller prints it, so the lines leave it out)."""
    links = {}
    if mirrored.experiment_url:
        links = {"langfuse.experiment_url": mirrored.experiment_url}
        links["langfuse.experiment_id"] = str(mirrored.experiment_id)
    return SinkReport(
        link=mirrored.experiment_url,
        links=links,
        lines=mirrored.lines(problems=False),
        problem="; ".join(mirrored.problems) or None,
        error=mirrored.problems_error(),
        detail=mirrored,
    )
