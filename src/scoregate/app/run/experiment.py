"""Run an experiment end to end, the library entry point: one run with its post-run steps (`steps.py` writes the
run's order); or one run per model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from scoregate.app.run.one_run import run_one
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.errors import ScoregateError
from scoregate.support.suggest import unknown_name
from scoregate.tracks.project import load_project

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["RunOptions", "RunOutcome", "run_experiment", "run_models", "runs_dir"]


def run_experiment(root: Path, experiment: str, options: RunOptions, *, console: Console | None = None) -> RunOutcome:
    """Run (or resume) one experiment and return its outcome; raise ScoregateError on bad input.

    Order: a resumed run's lock first (a run in use is refused at once), then every check of the files, then
    the models' one-token check, so a rejected or refused run never spends a model request. After the summary,
    the post-run steps (`steps.POST_RUN_STEPS`: a changed judge re-scores its canary set) run before the mirrors.
    """
    from scoregate.app.run.steps import POST_RUN_STEPS  # read at each run: a test may add a step

    return run_one(load_project(root), experiment, options, console=console, post_run=tuple(POST_RUN_STEPS))


def run_models(
    root: Path, experiment: str, models: list[str], options: RunOptions, *, console: Console | None = None
) -> list[RunOutcome]:
    """Run one experiment once per model, on the same items, one after another; return the outcomes in order."""
    if options.resume.run_id is not None or options.resume.retry_errors:
        raise ScoregateError("--models starts new runs; resume each run by its id instead")
    if options.selection.run_id is not None:
        raise ScoregateError("--models starts one run per model, each with its own id; drop --run-id")
    known = load_project(root).config.models
    unknown = [name for name in models if name not in known]
    if unknown:
        raise ScoregateError(
            f"--models: no model {', '.join(map(repr, unknown))} under `models:` in scoregate.yaml"
            + unknown_name(unknown[0], known),
            hint="every name is checked before the first run starts; fix the list and run again",
        )
    return [
        run_experiment(root, experiment, replace(options, models=replace(options.models, model=name)), console=console)
        for name in models
    ]
