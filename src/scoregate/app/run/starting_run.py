"""A run being started (`StartingRun`), as each start step sees it; the shape of a start step (`StartStep`; their
list is `start_steps.START_STEPS`, the whole order `scoregate.app.run.steps`) and of the way a run is run (`RunWay`:
whole or one shard, `scoregate.app.run.run_way`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.forecast import RunForecast
    from scoregate.app.run.finished_run import PostRunStep
    from scoregate.app.run.items import ItemsStep
    from scoregate.app.run.opened_run import OpenedRun
    from scoregate.app.run.run_options import RunOptions, RunOutcome
    from scoregate.app.run.stop_early import StopEarlyPlan
    from scoregate.calls.cache import ResponseCache
    from scoregate.calls.caller import ModelCaller
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project
    from scoregate.engine.preflight import BackgroundPreflight
    from scoregate.store.run_store import RunStore

__all__ = ["RunWay", "StartStep", "StartingRun"]

T = TypeVar("T")


def _made(value: T | None, what: str) -> T:
    if value is None:
        raise RuntimeError(f"a start step asked for the run's {what} before the step that makes it")
    return value


@dataclass
class StartingRun:
    """A run on its way to its first item: what it was asked (project, experiment, options, the way it runs, a
    resumed store) and what each start step adds (the plan, the budget's verdict, the caller, the store)."""

    project: Project
    experiment: str
    options: RunOptions
    way: RunWay
    """A whole run or one shard of one, chosen once (`run_way.choose_way`)."""
    console: Console | None
    post_run: Sequence[PostRunStep] = ()
    resumed: RunStore | None = None
    """The stored run (or shard) this one resumes, its lock held by `one_run.run_one`."""
    prompt_versions: dict[str, str] = field(default_factory=dict)
    """Prompt name → version: Langfuse's once the prompts step ran, every prompt's once the caller step ran."""
    plan: ExperimentPlan | None = None
    stop: StopEarlyPlan | None = None
    unchecked: RunForecast | None = None
    """A time budget no past run could check: the models' check sets its floor."""
    cache: ResponseCache | None = field(default=None, repr=False)
    caller: ModelCaller | None = field(default=None, repr=False)
    receipts: dict[str, Any] | None = None
    check: BackgroundPreflight | None = field(default=None, repr=False)
    sinks_check: Callable[[], None] | None = field(default=None, repr=False)
    """The sinks' own checks of their trackers, run first in the models' check's thread (see `sinks_step`)."""
    out: Console | None = field(default=None, repr=False)
    """Where the run's output goes, once the models' check is out."""
    store: RunStore | None = None

    @property
    def planned(self) -> ExperimentPlan:
        """The plan, once the plan step has made it."""
        return _made(self.plan, "plan")

    @property
    def calling(self) -> ModelCaller:
        """The model caller, once the caller step has made it."""
        return _made(self.caller, "model caller")

    @property
    def checking(self) -> BackgroundPreflight:
        """The models' one-token check, once the models' check step has started it."""
        return _made(self.check, "models' check")

    @property
    def output(self) -> Console:
        """The run's console, once the models' check step has chosen it."""
        return _made(self.out, "console")

    @property
    def stored(self) -> RunStore:
        """The run's store, once the store step has opened it."""
        return _made(self.store, "store")

    def items(self) -> ItemsStep:
        """The way this run runs its items (a shard's, a stop-early run's, or every item), from its way."""
        return self.way.items(self.planned, self.options, self.stop)


class RunWay(Protocol):
    """How a run is run: whole, or as one shard of a run that `scoregate merge` makes whole."""

    def open(self, project: Project, experiment: str, options: RunOptions) -> OpenedRun:
        """The run's options, the stored run it resumes (None for a new one) and any plan it built; refuse a bad
        run id."""

    def resume(self, run: StartingRun) -> RunOutcome | None:
        """A resumed run's outcome when it has nothing to run (its mirrors finished), else None: run it."""

    def create(self, project: Project, plan: ExperimentPlan, options: RunOptions, manifest: dict[str, Any]) -> RunStore:
        """Create a new run's store with `manifest` (its run id filled in)."""

    def items(self, plan: ExperimentPlan, options: RunOptions, stop: StopEarlyPlan | None) -> ItemsStep:
        """How the run's items run (`items.py`)."""


class StartStep(Protocol):
    """A step before a run's items: it reads the run being started and adds to it; it refuses by raising."""

    def __call__(self, run: StartingRun) -> None: ...
