"""The merge's Langfuse step: the shards sent their items to the run's one experiment; the merge takes over what
they recorded, sends any item a shard could not, writes the run-level scores and checks the experiment's count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoregate.store.shards import ShardStore
from scoregate.support.redaction import redact

if TYPE_CHECKING:
    from scoregate.app.merge import MergeOutcome
    from scoregate.app.merge_inputs import ShardInput
    from scoregate.catalog.project import Project
    from scoregate.store.run_store import RunStore


def adopt_shard_mirrors(store: RunStore, inputs: list[ShardInput], host: str) -> int:
    """Record in the merged run's mirror state every item a shard mirrored to `host`; return how many were added."""
    from scoregate.sinks.langfuse.mirror_state import MirrorState

    state = MirrorState.load(store, host)
    added = 0
    for shard in inputs:
        mirrored = MirrorState.load(ShardStore(shard.directory, store.run_id), host)
        if not mirrored.belongs_to(state.project_id) or not mirrored.items:
            continue
        state.project_id = state.project_id or mirrored.project_id
        state.experiment_id = state.experiment_id or mirrored.experiment_id
        state.experiment_url = state.experiment_url or mirrored.experiment_url
        for key, item in mirrored.items.items():
            if key not in state.items or not state.items[key].trace:
                state.items[key] = item
                added += 1
    state.save(store)
    return added


def mirror_merged_run(store: RunStore, project: Project, inputs: list[ShardInput], outcome: MergeOutcome) -> None:
    """Write the run-level scores to the run's experiment and check that it holds every item of the run."""
    from scoregate.integrations.langfuse.client import NOT_CONFIGURED, LangfuseSettings

    settings = LangfuseSettings.from_env()
    if settings is None:
        outcome.mirror_notes.append(f"langfuse: skipped — {NOT_CONFIGURED}")
        return
    from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse

    try:
        adopt_shard_mirrors(store, inputs, settings.host)
        report = mirror_run_to_langfuse(store, project)
    except Exception as exc:  # reported; the next merge sends what is missing
        outcome.mirror_errors["langfuse"] = redact(f"{type(exc).__name__}: {exc}")
        return
    outcome.mirror_notes += [redact(line) for line in report.lines()]
    if report.experiment_url:
        outcome.mirrors["langfuse"] = report.experiment_url
    problems = list(report.problems)
    if report.items_confirmed != report.items_total:
        problems.append(f"the experiment holds {report.items_confirmed} of the run's {report.items_total} items")
    if problems:
        outcome.mirror_errors["langfuse"] = redact("; ".join(problems))
