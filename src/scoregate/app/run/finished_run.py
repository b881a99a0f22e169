"""A run whose items are done (`FinishedRun`), as the steps after the items see it, and the shape of a post-run
step (`PostRunStep`); the list of steps is `scoregate.app.run.steps`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.run.run_options import RunOptions, RunOutcome
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project
    from scoregate.store.run_store import RunStore
    from scoregate.support.forked import Forked


@dataclass
class FinishedRun:
    """A run whose items are done and stored, as each step after the items sees it."""

    store: RunStore
    plan: ExperimentPlan
    project: Project
    options: RunOptions
    console: Console | None
    post_run: Sequence[PostRunStep] = ()
    """The post-run steps this run was given (`steps.POST_RUN_STEPS`)."""
    outcome: RunOutcome | None = None
    """Set by the summary step; the steps after it add to it (the report, the mirrors)."""
    telemetry: Forked | None = field(default=None, repr=False)
    """The per-call telemetry being written in a child process beside the summary (`scoregate.support.forked`)."""

    @property
    def result(self) -> RunOutcome:
        """The outcome, once the summary step has made it."""
        if self.outcome is None:
            raise RuntimeError("a step after the summary asked for the run's outcome before the summary step")
        return self.outcome


class PostRunStep(Protocol):
    """A step after a finished run: it receives the run (summary and report written), before the mirrors."""

    def __call__(self, run: FinishedRun) -> None: ...
