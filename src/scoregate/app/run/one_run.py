"""Run (or resume) one experiment: choose its way (whole or one shard), take a resumed run's lock, go through the
start steps (`start_steps.START_STEPS`: plan, budget gate, the models' check, the store), then run the items.

The models' one-token check is sent only once every file check has passed (and a resumed run's lock is held),
so a rejected run spends no request; it runs in a thread while the imports of `scoregate.app.run.run_execution` go on.
The steps that follow a finished run (a judge's canary) are `scoregate.app.run.experiment`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scoregate.app.run import start_steps
from scoregate.app.run.run_options import RunOptions, RunOutcome
from scoregate.app.run.run_way import choose_way
from scoregate.app.run.starting_run import StartingRun
from scoregate.catalog.project import Project
from scoregate.store.lock import RunLock
from scoregate.support.redaction import register_secret_env
from scoregate.support.start_gc import release_collector

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.run.finished_run import PostRunStep

__all__ = ["run_one"]


def run_one(
    project: Project,
    experiment: str,
    options: RunOptions,
    *,
    console: Console | None = None,
    post_run: Sequence[PostRunStep] = (),
) -> RunOutcome:
    """Run (or resume) one experiment, with the post-run steps given (`steps.POST_RUN_STEPS`, none by default);
    return its outcome; raise ScoregateError.

    Order: a resumed run's lock first (a run in use is refused at once), then every check of the files, then
    the models' one-token check, so a rejected or refused run never spends a model request.
    """
    register_secret_env(spec.api_key_env for spec in project.config.models.values())
    way = choose_way(options)
    options, resumed, plan = way.open(project, experiment, options)  # a re-run of a shard's index resumes it
    lock: RunLock | None = None
    if resumed is not None:
        lock = RunLock(resumed.directory)
        lock.acquire()
    try:
        run = StartingRun(project, experiment, options, way, console, post_run, resumed=resumed, plan=plan)
        if resumed is not None:
            release_collector()  # a finished run or shard only mirrors, a resumed one may: no start to speed
            if (done := way.resume(run)) is not None:
                return done
        outcome = _start_and_run(run, locked=lock is not None)
    finally:
        if lock is not None:
            lock.release()
    return outcome


def _start_and_run(run: StartingRun, *, locked: bool) -> RunOutcome:
    """Take the run through `START_STEPS` (read now: a test may insert one), then run its items in its store."""
    try:
        for step in start_steps.START_STEPS:
            step(run)
    except BaseException:
        if run.cache is not None:
            run.cache.close()
        raise
    from scoregate.app.run.run_execution import execute_run

    if locked:
        return execute_run(run)
    with RunLock(run.stored.directory):
        return execute_run(run)
