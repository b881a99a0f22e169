"""A planned run in its store: execute the items (resumable), summarise, gate, write the report, mirror.

`scoregate.app.run.one_run` sets a run up (plan, receipts, the models' check, the store) and imports this module
while the check waits on the network: everything here is needed only once a run exists.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from scoregate.analysis.consistency import consistency
from scoregate.analysis.gates import GateResult, evaluate_gate, overall_verdict
from scoregate.app.run.budget import BudgetExceeded, BudgetWatch, budget_of
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.app.run.score_columns import plan_evaluators, score_columns
from scoregate.app.run.shards import resume_command, run_or_shard_label, shard_items, shard_members
from scoregate.app.run.stop_early import StopEarlyPlan, run_stop_early, stop_summary, stopped_status
from scoregate.calls.breaker import CircuitOpen
from scoregate.calls.cache import ResponseCache
from scoregate.calls.caller import ModelCaller
from scoregate.catalog.config_models import GateSpec
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.engine.item import ItemPipeline
from scoregate.engine.live import LiveProgress
from scoregate.engine.progress import RunProgress
from scoregate.engine.repeats import pipeline_for_repeat
from scoregate.engine.runner import execute, pending_items
from scoregate.engine.stages import staged_pipeline
from scoregate.engine.termination import Terminated, run_terminable, sigterm_as_interrupt
from scoregate.errors import ExitCode, RunInterrupted, ScoregateError
from scoregate.store.invalidation import with_invalidation
from scoregate.store.repeats import done_by_repeat, iter_all_results
from scoregate.store.run_store import RunStore
from scoregate.store.telemetry import write_telemetry
from scoregate.support.forked import call_forked
from scoregate.support.redaction import redact
from scoregate.tracks.base import TrackSettings
from scoregate.tracks.registry import take_gate_metrics, track_reports

WARM_IMPORTS_AFTER_S = 0.1
"""The summary's imports start this long after the items do, once the first requests are out."""


def _every_item(plan: ExperimentPlan) -> bool:
    return any(g.stat == "every_item" and (g.datasets is None or plan.dataset.name in g.datasets) for g in plan.gates)


def summarize_run(store: RunStore, plan: ExperimentPlan, project: Project) -> dict[str, Any]:
    """Aggregate the stored results, judge the gates, write and return summary.json."""
    from scoregate.analysis.regression import is_regression_gate
    from scoregate.analysis.summary import RunAggregator
    from scoregate.app.regression_gate import evaluate_regression_gate
    from scoregate.app.run.flaky_items import find_flaky, quarantine_hint
    from scoregate.app.run.slice_gates import evaluate_slice_gate

    settings = project.config.settings
    aggregator = RunAggregator(score_columns(plan_evaluators(plan), plan))
    for result in store.iter_results():
        aggregator.add(result)
    summary = aggregator.summary(
        confidence=settings.confidence_level, resamples=settings.bootstrap_resamples, seed=settings.seed
    )
    track_settings = TrackSettings(
        settings.min_coverage, settings.confidence_level, settings.bootstrap_resamples, settings.seed
    )
    tracks = track_reports(plan_evaluators(plan), store, summary, track_settings)
    summary["scores"].update(take_gate_metrics(tracks))  # run-level track metrics (micro values) a gate can name
    for block in tracks.values():  # each label kind a track counts joins the run's coverage block
        summary["coverage"].update({k: v for k, v in (block.get("coverage") or {}).items() if k.startswith("samples_")})
    gates: list[GateResult] = []
    flaky = find_flaky(project.config, runs_dir(project), plan.name, current=store) if _every_item(plan) else None
    for gate in plan.gates:
        if gate.datasets is not None and plan.dataset.name not in gate.datasets:
            continue
        if is_regression_gate(gate):
            gates.append(
                (evaluate_slice_gate if gate.slices else evaluate_regression_gate)(
                    gate, store, project_root=project.root, runs_dir=runs_dir(project),
                    min_coverage=settings.min_coverage, confidence=settings.confidence_level,
                    resamples=settings.bootstrap_resamples, seed=settings.seed,
                )
            )  # fmt: skip
            continue
        column = aggregator.column(gate.metric) if aggregator.has_column(gate.metric) else None
        leave_out = flaky.kept_out(gate.name) if flaky is not None and gate.stat == "every_item" else set()
        verdict = evaluate_gate(
            gate, summary, column=column, min_coverage=settings.min_coverage, item_ids=aggregator.item_ids,
            quarantined=leave_out, quarantine_hint=quarantine_hint(plan.name),
        )  # fmt: skip
        gates.append(_with_calibration(verdict, gate, project, plan))
    manifest = store.manifest_record
    summary = {
        "run_id": store.run_id,
        "experiment": plan.name,
        "dataset": plan.dataset.name,
        "prompts": manifest.receipts.prompt_versions(),
        "model": plan.model_name,
        **summary,
        "gates": [g.to_dict() for g in gates],
        "verdict": overall_verdict(gates),
    }
    summary.update(tracks)
    if flaky is not None:
        summary["flaky"] = flaky.to_dict()
    from scoregate.app.run.judge_gates import judge_calibration_rows

    if judges := judge_calibration_rows(project, list(plan.evaluators), plan.judge_model_name):
        summary["judge_drift"] = judges
    if plan.spec.stages:
        from scoregate.analysis.stage_summary import stage_summary

        summary["stages"] = stage_summary(store.iter_results(), [stage.name for stage in plan.spec.stages])
    repeats = manifest.options.repeat
    if repeats > 1:
        summary["repeats"] = consistency(iter_all_results(store), repeats, score_columns(plan_evaluators(plan), plan))
    if (stopped := stop_summary(store)) is not None:
        summary["stop_early"] = stopped
    summary = with_invalidation(store, summary)  # a run invalidated before it finished stays invalid
    store.write_summary(summary)
    return summary


def _with_calibration(result: GateResult, gate: GateSpec, project: Project, plan: ExperimentPlan) -> GateResult:
    """A gate that requires a calibrated judge takes the calibration's status unless it already failed."""
    need = gate.requires_calibration
    if need is None or result.status == "fail":
        return result
    from scoregate.app.calibration_runs import calibration_status

    status, detail = calibration_status(
        project, need.evaluator, plan.judge_model_name, floor=need.floor, metric=need.metric,
        score_key=need.score_key, stat=need.stat, min_pairs=need.min_pairs,
    )  # fmt: skip
    if status == "pass":
        return result.model_copy(update={"detail": f"{result.detail}; judge calibrated: {detail}"})
    return result.model_copy(update={"status": status, "detail": f"judge calibration {status}: {detail}"})


def _mark_failed(store: RunStore, error: BaseException) -> None:
    """Record `failed` and the reason in the manifest, if the disk still lets us (the first error wins)."""
    reason = error.message if isinstance(error, ScoregateError) else f"{type(error).__name__}: {error}"
    with suppress(OSError):
        store.close()
    with suppress(OSError, ScoregateError):
        store.update_manifest(status="failed", failure=redact(reason))


def execute_run(
    store: RunStore,
    plan: ExperimentPlan,
    project: Project,
    options: RunOptions,
    caller: ModelCaller,
    prompt_versions: dict[str, str],
    console: Console,
    cache: ResponseCache | None,
    stop: StopEarlyPlan | None = None,
) -> RunOutcome:
    if stop is not None:
        store.update_manifest(stop_early=stop.record())
    try:
        with sigterm_as_interrupt():
            run_terminable(_execute(plan, project, options, caller, store, prompt_versions, console, stop))
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
    if options.sharding.shard is not None:  # a shard writes no summary, gates, report or MLflow: `scoregate merge` does
        from scoregate.app.run.shards import finish_shard

        return finish_shard(store, project, options)
    telemetry = call_forked(lambda: write_telemetry(store))  # beside the summary and report, on another core
    summary = summarize_run(store, plan, project)
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=summary)
    if options.mirrors.report:
        _write_report(store, project, outcome)
    if not telemetry.wait():  # the child failed: write it here, where its error is raised
        write_telemetry(store)
    _mirror(store, project, options, outcome)  # the MLflow mirror logs metrics.json and metrics.csv
    return outcome


def _mirror(store: RunStore, project: Project, options: RunOptions, outcome: RunOutcome) -> None:
    """Mirror the finished run to every sink the options leave on; a sink's failure is reported, never raised."""
    from scoregate.sinks.contract import SinkContext  # the sinks load only when a run mirrors
    from scoregate.sinks.mirror_all import Mirror, mirror_all

    context = SinkContext(project.root, loaded=project, item_rows=options.mirrors.eval_rows)
    outcome.add_mirrors(mirror_all(Mirror(store), context, skip=options.mirrors.off))


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
        import scoregate.report.write
        import scoregate.sinks.mirror_all  # noqa: F401

    threading.Thread(target=load, name="scoregate-warm-imports", daemon=True).start()


def _write_report(store: RunStore, project: Project, outcome: RunOutcome) -> None:
    """Write the run's HTML report before the mirrors, so MLflow logs it as an artifact; a failure is reported."""
    from scoregate.report.write import project_report_options, write_run_report

    try:
        outcome.report = write_run_report(store, project_report_options(project.root))
    except Exception as exc:  # the run is stored; `scoregate report RUN` writes it again
        outcome.mirror_errors["report"] = redact(f"{type(exc).__name__}: {exc}")


async def _execute(
    plan: ExperimentPlan,
    project: Project,
    options: RunOptions,
    caller: ModelCaller,
    store: RunStore,
    prompt_versions: dict[str, str],
    console: Console,
    stop: StopEarlyPlan | None = None,
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
        members = (
            shard_members(plan.dataset.path, options.selection.limit, options.sharding.shard)
            if options.sharding.shard
            else None
        )
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
            if stop is not None:
                await run_stop_early(
                    stop, pipeline, plan, store, concurrency=concurrency, progress=progress, breaker=caller.breaker
                )
                return
            for repeat in range(1, options.selection.repeat + 1):
                async with _time_budget(watch):
                    await execute(
                        pipeline_for_repeat(pipeline, repeat),
                        shard_items(
                            pending_items(plan.dataset.path, done_by[repeat], options.selection.limit), members
                        ),
                        store,
                        concurrency=concurrency,
                        progress=progress,
                        breaker=caller.breaker,
                    )
    finally:
        await caller.aclose()


@asynccontextmanager
async def _time_budget(watch: BudgetWatch) -> AsyncIterator[None]:
    """Cancel the items in flight when the time budget runs out (they are not stored: a resume redoes them)."""
    left = watch.seconds_left()
    if left is None:
        yield
        return
    try:
        async with asyncio.timeout(left):
            yield
    except TimeoutError:
        raise BudgetExceeded(watch.out_of_time()) from None
