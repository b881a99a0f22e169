"""A planned run in its store: run its items (resumable) the way chosen for it, then end it (`steps.py`).

`scoregate.app.run.start_steps` set a run up (plan, receipts, the models' check, the store) and import this module
while the check waits on the network: everything here is needed only once a run exists.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import suppress
from datetime import UTC, datetime

from rich.console import Console

from scoregate.app.run.budget import BudgetExceeded, BudgetWatch, budget_of
from scoregate.app.run.finished_run import FinishedRun
from scoregate.app.run.items import ItemRun, ItemsStep
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.app.run.score_columns import plan_evaluators
from scoregate.app.run.shards import resume_command, run_or_shard_label
from scoregate.app.run.starting_run import StartingRun
from scoregate.app.run.stop_early import stopped_status
from scoregate.calls.breaker import CircuitOpen
from scoregate.calls.caller import ModelCaller
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.engine.item import ItemPipeline
from scoregate.engine.live import LiveProgress
from scoregate.engine.progress import RunProgress
from scoregate.engine.stages import staged_pipeline
from scoregate.engine.termination import Terminated, run_terminable, sigterm_as_interrupt
from scoregate.errors import ExitCode, RunInterrupted, ScoregateError
from scoregate.store.repeats import done_by_repeat
from scoregate.store.run_store import RunStore
from scoregate.support.redaction import redact

WARM_IMPORTS_AFTER_S = 0.1
"""The summary's imports start this long after the items do, once the first requests are out."""


def _mark_failed(store: RunStore, error: BaseException) -> None:
    """Record `failed` and the reason in the manifest, if the disk still lets us (the first error wins)."""
    reason = error.message if isinstance(error, ScoregateError) else f"{type(error).__name__}: {error}"
    with suppress(OSError):
        store.close()
    with suppress(OSError, ScoregateError):
        store.update_manifest(status="failed", failure=redact(reason))


def execute_run(run: StartingRun) -> RunOutcome:
    """Run the started run's items the way chosen for it (`run_way.choose_way`, `items.py`), then end it as that
    way ends a run: a whole run through `steps.FINISH_STEPS`, a shard at `shards.finish_shard`. A kill, the budget
    or an open circuit stops it as `interrupted`, with the command that resumes it."""
    store, plan, project, options, cache = run.stored, run.planned, run.project, run.options, run.cache
    items = run.items()
    if run.stop is not None:
        store.update_manifest(stop_early=run.stop.record())
    try:
        with sigterm_as_interrupt():
            run_terminable(_execute(plan, project, options, run.calling, store, run.prompt_versions, run.output, items))
    except KeyboardInterrupt as exc:
        store.close()
        store.update_manifest(status="interrupted")
        done = len(store.done_ids())
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        code = ExitCode.TERMINATED if isinstance(exc, Terminated) else ExitCode.INTERRUPTED
        raise RunInterrupted(
            f"{run_or_shard_label(store, options)} {how}; {done} finished item(s) are kept in {store.directory}",
            hint=f"resume with `{resume_command(store, options)}`",
            exit_code=code,
        ) from None
    except BudgetExceeded as exc:
        store.close()
        store.update_manifest(status="interrupted", stopped_because=f"budget: {exc.reason}")
        raise RunInterrupted(
            f"run {store.run_id} stopped at its budget: {exc.reason}; {len(store.done_ids())} finished item(s) "
            f"are kept in {store.directory}",
            hint=f"resume with `scoregate run --resume {store.run_id}` (its budget is its own: "
            "--budget-usd / --budget-minutes, else settings.budget)",
            exit_code=ExitCode.ERROR,
        ) from None
    except CircuitOpen as exc:
        store.close()
        store.update_manifest(status="interrupted", stopped_because=redact(exc.reason))
        raise RunInterrupted(
            f"{run_or_shard_label(store, options)} stopped early: {exc.count} calls in a row failed, the last with: "
            f"{redact(exc.reason)}",
            hint=f"fix the endpoint, then redo the failed items with `{resume_command(store, options)} --retry-errors`",
        ) from None
    except BaseException as exc:
        _mark_failed(store, exc)
        raise
    finally:
        if cache is not None:
            cache.close()
    store.close()
    store.update_manifest(status=stopped_status(store), finished_at=datetime.now(UTC).isoformat())
    return items.finish(FinishedRun(store, plan, project, options, run.console, run.post_run))


def warm_summary_imports() -> None:
    """Import what the run's end needs (the summary's numpy and statistics, the gates, the report, the mirrors'
    dispatcher: ~0.4 s of CPU) in a thread while the items wait on the model, not after the last item."""

    def load() -> None:
        import scoregate.analysis.summary
        import scoregate.app.calibration_runs
        import scoregate.app.regression_gate
        import scoregate.app.run.flaky_items
        import scoregate.app.run.judge_gates
        import scoregate.app.run.slice_gates
        import scoregate.app.run.summary
        import scoregate.report.write
        import scoregate.sinks.mirror_all  # noqa: F401

    threading.Thread(target=load, name="scoregate-warm-imports", daemon=True).start()


async def _execute(
    plan: ExperimentPlan,
    project: Project,
    options: RunOptions,
    caller: ModelCaller,
    store: RunStore,
    prompt_versions: dict[str, str],
    console: Console,
    items: ItemsStep,
) -> None:
    try:
        pipeline = ItemPipeline(
            route=plan.route,
            prompts=plan.prompts,
            prompt_versions=prompt_versions,
            model_name=plan.model_name,
            caller=caller,
            evaluators=plan_evaluators(plan),
            composites=plan.composites,
            output_from=plan.spec.output_from,
        )
        if plan.spec.stages:
            pipeline = staged_pipeline(pipeline, plan)
        done = store.done_ids(retry_errors=options.resume.retry_errors)
        per_repeat = (
            min(plan.dataset_scan.count, options.selection.limit)
            if options.selection.limit
            else plan.dataset_scan.count
        )
        members = items.members
        per_repeat = per_repeat if members is None else len(members)
        concurrency = options.concurrency or plan.spec.concurrency or project.config.settings.concurrency
        later = (
            done_by_repeat(store, retry_errors=options.resume.retry_errors) if options.selection.repeat > 1 else {}
        )  # repeats 2..K resume on their own
        done_by = {1: done, **{r: later.get(r, set()) for r in range(2, options.selection.repeat + 1)}}
        total, already = per_repeat * options.selection.repeat, sum(len(ids) for ids in done_by.values())
        final_stage = plan.spec.stages[-1].name if plan.spec.stages else None
        live = LiveProgress(
            store, runs_dir(project), experiment=plan.name, total=total, already_done=already, final_stage=final_stage
        )
        budget = budget_of(project.config.settings, options.budget.usd, options.budget.minutes)
        watch = BudgetWatch(budget)
        progress = RunProgress(
            total, already_done=already, console=console, heartbeat_s=options.heartbeat_s, activity=caller.activity,
            repeat=options.selection.repeat,
        )  # fmt: skip
        with progress, live:
            progress.listeners.append(live.observe)
            if budget.any:
                progress.listeners.append(watch.observe)  # after the live files saw the item
            asyncio.get_running_loop().call_later(WARM_IMPORTS_AFTER_S, warm_summary_imports)
            limit = options.selection.limit
            await items.run(
                ItemRun(pipeline, plan, store, done_by, limit, concurrency, progress, watch, caller.breaker)
            )
    finally:
        await caller.aclose()
