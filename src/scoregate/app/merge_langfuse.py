"""The merge's mirrors: every sink mirrors the merged run like any run (MLflow's run found by its tag). For
Langfuse, the shards sent their items to the run's one experiment already: the merge takes over what they recorded
(so nothing is sent twice), sends any item a shard could not, writes the run-level scores and checks that the
experiment holds every item of the run."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from scoregate.store.shards import ShardStore

if TYPE_CHECKING:
    from scoregate.app.merge_inputs import ShardInput
    from scoregate.app.merge_outcome import MergeOutcome
    from scoregate.catalog.project import Project
    from scoregate.store.run_store import RunStore


def adopt_shard_mirrors(store: RunStore, inputs: list[ShardInput], host: str) -> int:
    """Record in the merged run's mirror state every item a shard mirrored to `host`; return how many were added."""
    from scoregate.integrations.langfuse.mirror_state import MirrorState

    state = MirrorState.load(store, host)
    added = 0
    for shard in inputs:
        mirrored = MirrorState.load(ShardStore(shard.directory, store.run_id), host)
        if not mirrored.belongs_to(state.project_id) or not mirrored.counts()[0]:
            continue
        state.project_id = state.project_id or mirrored.project_id
        state.experiment_id = state.experiment_id or mirrored.experiment_id
        state.experiment_url = state.experiment_url or mirrored.experiment_url
        added += state.adopt(mirrored)
    state.save(store)
    return added


def mirror_merged_run(
    store: RunStore, project: Project, inputs: list[ShardInput], outcome: MergeOutcome, skip: Collection[str]
) -> None:
    """Mirror the merged run to every sink not in `skip`; check the Langfuse experiment's item count."""
    from scoregate.integrations.langfuse.client import LangfuseSettings
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import Mirror, mirror_all

    settings = LangfuseSettings.from_env()
    if settings is not None and "langfuse" not in skip:
        adopt_shard_mirrors(store, inputs, settings.host)
    mirrored = mirror_all(Mirror(store), SinkContext(project.root, loaded=project), skip=skip)
    for name, result in mirrored.results.items():
        report = result.report
        if report.link:
            outcome.mirrors[name] = report.link
        outcome.mirror_notes += [report.skipped] if report.skipped else report.lines
        if result.trouble:
            outcome.mirror_errors[name] = result.trouble
    outcome.mirror_notes += mirrored.notes
    langfuse = mirrored.results.get("langfuse")
    detail = langfuse.report.detail if langfuse is not None else None
    if detail is not None and detail.items_confirmed != detail.items_total and "langfuse" not in outcome.mirror_errors:
        outcome.mirror_errors["langfuse"] = (
            f"the experiment holds {detail.items_confirmed} of the run's {detail.items_total} items"
        )
