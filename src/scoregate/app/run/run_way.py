"""A whole run or one shard of one: the choice is made once per run (`choose_way`), and the way chosen opens the
run's store, says when a resumed one has nothing to run, and picks how its items run (`items.py`); the shape they
share is `starting_run.RunWay`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoregate.app.run.opened_run import OpenedRun
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.errors import ScoregateError
from scoregate.store.run_store import RunStore, new_run_id, run_directory

if TYPE_CHECKING:
    from scoregate.app.run.items import ItemsStep
    from scoregate.app.run.starting_run import RunWay, StartingRun
    from scoregate.app.run.stop_early import StopEarlyPlan
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project
    from scoregate.store.shards import Shard

__all__ = ["ShardRun", "WholeRun", "choose_items", "choose_way"]


def choose_way(options: RunOptions) -> RunWay:
    """A shard's way when the options name a shard, else a whole run's."""
    shard = options.sharding.shard
    return WholeRun() if shard is None else ShardRun(shard)


def choose_items(plan: ExperimentPlan, options: RunOptions, stop: StopEarlyPlan | None) -> ItemsStep:
    """The run's way of running its items, decided once: a shard's, a stop-early run's, or every item."""
    return choose_way(options).items(plan, options, stop)


@dataclass(frozen=True)
class WholeRun:
    """A whole run: new (`--run-id` names a new one), or resumed by `--resume ID`."""

    def open(self, project: Project, experiment: str, options: RunOptions) -> OpenedRun:
        """The stored run `--resume` names; refuse a `--run-id` that names a stored run."""
        if options.resume.run_id is not None:
            return OpenedRun(options, RunStore.open(runs_dir(project), options.resume.run_id))
        if options.selection.run_id is not None:
            _check_new_run_id(project, options.selection.run_id)
        return OpenedRun(options, None)

    def resume(self, run: StartingRun) -> RunOutcome | None:
        """A finished run with nothing to redo only mirrors; else the run goes on with the options it recorded."""
        from scoregate.app.run.resumption import finish_mirror, nothing_to_resume, resumed_options

        assert run.resumed is not None
        if (reason := nothing_to_resume(run.resumed, run.options)) is not None:
            return finish_mirror(run.resumed, run.project, run.options, reason)
        run.experiment, run.options = resumed_options(run.resumed.manifest_record, run.options)
        return None

    def create(self, project: Project, plan: ExperimentPlan, options: RunOptions, manifest: dict[str, Any]) -> RunStore:
        """`runs/<run_id>/`, the id given or a new one."""
        run_id = options.selection.run_id or new_run_id(plan.name)
        return RunStore.create(runs_dir(project), run_id, {**manifest, "run_id": run_id})

    def items(self, plan: ExperimentPlan, options: RunOptions, stop: StopEarlyPlan | None) -> ItemsStep:
        """A stop-early run's batches, or every item of each repeat."""
        from scoregate.app.run.items import AllItems, StopEarlyItems

        return AllItems() if stop is None else StopEarlyItems(stop=stop)


@dataclass(frozen=True)
class ShardRun:
    """One shard of a run (`--shard I/N`): a re-run of its index resumes it; it ends at `shards.finish_shard`."""

    shard: Shard

    def open(self, project: Project, experiment: str, options: RunOptions) -> OpenedRun:
        """The shard's run id (given or derived, with the plan deriving it), its share of the budget, and its store
        if it exists."""
        from scoregate.app.run.shards import prepare_shard

        return prepare_shard(project, experiment, options)

    def resume(self, run: StartingRun) -> RunOutcome | None:
        """A finished shard calls no model: it mirrors its items again (`shards.finish_shard`)."""
        from scoregate.app.run.shards import finish_shard, finished_shard_note

        assert run.resumed is not None
        if (reason := finished_shard_note(run.resumed, run.project, run.options)) is None:
            return None
        outcome = finish_shard(run.resumed, run.project, run.options)
        outcome.nothing_to_do = reason
        return outcome

    def create(self, project: Project, plan: ExperimentPlan, options: RunOptions, manifest: dict[str, Any]) -> RunStore:
        """`runs/<run_id>/shards/<I>-of-<N>/`, its manifest naming the run and the shard."""
        from scoregate.app.run.shards import create_shard_store

        return create_shard_store(project, options, manifest)

    def items(self, plan: ExperimentPlan, options: RunOptions, stop: StopEarlyPlan | None) -> ItemsStep:
        """The shard's own items (a shard never stops early: the options refuse both)."""
        from scoregate.app.run.items import ShardItems
        from scoregate.app.run.shards import shard_members

        return ShardItems(frozenset(shard_members(plan.dataset.path, options.selection.limit, self.shard)))


def _check_new_run_id(project: Project, run_id: str) -> None:
    """Refuse `--run-id` when it is not one file name or names a stored run (resuming that is `--resume`)."""
    directory = run_directory(runs_dir(project), run_id)
    if directory.exists():
        raise ScoregateError(
            f"run {run_id} already exists in {directory}; --run-id names a new run",
            hint=f"resume it with `scoregate run --resume {run_id}`, or give another --run-id",
        )
