"""The steps of a whole run once its items are done, each taking the `FinishedRun`: the summary (gates
included), the HTML report, the per-call telemetry, the post-run steps the run was given, the mirrors; their
order is `FINISH_STEPS` (the whole run's order: `scoregate.app.run.steps`)."""

from __future__ import annotations

from collections.abc import Callable

from scoregate.app.run.finished_run import FinishedRun
from scoregate.app.run.run_options import RunOutcome
from scoregate.store.telemetry import write_telemetry
from scoregate.support.forked import call_forked
from scoregate.support.redaction import redact

__all__ = ["mirror_step", "report_step", "summary_step", "telemetry_step"]


def summary_step(run: FinishedRun) -> None:
    """Write the per-call telemetry in a child (on another core) and the summary here; make the run's outcome."""
    from scoregate.app.run.summary import summarize_run

    store = run.store
    run.telemetry = call_forked(lambda: write_telemetry(store))
    summary = summarize_run(store, run.plan, run.project)
    run.outcome = RunOutcome(run_id=store.run_id, store=store, summary=summary)


def report_step(run: FinishedRun) -> None:
    """Write the run's HTML report before the mirrors, so MLflow logs it as an artifact; a failure is reported."""
    if not run.options.mirrors.report:
        return
    from scoregate.report.write import project_report_options, write_run_report

    outcome = run.result
    try:
        outcome.report = write_run_report(run.store, project_report_options(run.project.root))
    except Exception as exc:  # the run is stored; `scoregate report RUN` writes it again
        outcome.mirror_errors["report"] = redact(f"{type(exc).__name__}: {exc}")


def telemetry_step(run: FinishedRun) -> None:
    """Wait for the telemetry's child: the MLflow mirror logs metrics.json and metrics.csv."""
    if run.telemetry is None or not run.telemetry.wait():  # the child failed: write it here, where its error is raised
        write_telemetry(run.store)


def mirror_step(run: FinishedRun) -> None:
    """Mirror the finished run to every sink the options leave on; a sink's failure is reported, never raised."""
    from scoregate.sinks.contract import SinkContext  # the sinks load only when a run mirrors
    from scoregate.sinks.mirror_all import Mirror, mirror_all

    mirrors = run.options.mirrors
    context = SinkContext(run.project.root, loaded=run.project, item_rows=mirrors.eval_rows)
    run.result.add_mirrors(mirror_all(Mirror(run.store), context, skip=mirrors.off))


def post_run_step(run: FinishedRun) -> None:
    """Run each post-run step the run was given (`steps.POST_RUN_STEPS`), in order, on the finished run."""
    for step in run.post_run:
        step(run)


FINISH_STEPS: tuple[Callable[[FinishedRun], None], ...] = (
    summary_step,
    report_step,
    telemetry_step,
    post_run_step,
    mirror_step,
)
"""What a whole run does once its items are done, in order."""


def finish_run(run: FinishedRun) -> RunOutcome:
    """Take a run whose items are done through `FINISH_STEPS`; return its outcome."""
    for step in FINISH_STEPS:
        step(run)
    return run.result
