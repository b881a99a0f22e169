"""Run an experiment end to end: plan, execute (resumable), summarise, gate, mirror. The library entry point."""

from __future__ import annotations

import asyncio
import os
import threading
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from scoregate.analysis.consistency import consistency
from scoregate.analysis.gates import GateResult, evaluate_gate, overall_verdict
from scoregate.catalog.models import FactRecallSpec, GateSpec, LlmJudgeSpec
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.project import Project, load_project
from scoregate.catalog.routing import route_prompts
from scoregate.catalog.stages import stage_models
from scoregate.engine.breaker import CircuitBreaker, CircuitOpen
from scoregate.engine.cache import ResponseCache
from scoregate.engine.calls import ModelCaller
from scoregate.engine.item import ItemPipeline
from scoregate.engine.live import LiveProgress
from scoregate.engine.progress import RunProgress
from scoregate.engine.repeats import (
    done_by_repeat,
    failed_records,
    iter_all_results,
    pipeline_for_repeat,
    repeat_key,
    repeats_receipt,
)
from scoregate.engine.runner import execute, pending_items
from scoregate.engine.stages import stage_evaluators, stage_score_columns, staged_pipeline, stages_receipt
from scoregate.engine.termination import Terminated, sigterm_as_interrupt
from scoregate.errors import ExitCode, RunInterrupted, ScoregateError
from scoregate.receipts import build_receipts, local_prompt_version, resume_conflicts
from scoregate.records import DataType
from scoregate.redaction import redact, register_secret_env
from scoregate.run_lock import RunLock
from scoregate.scoring.base import Evaluator
from scoregate.scoring.registry import build_evaluator
from scoregate.sinks.telemetry import write_telemetry
from scoregate.store import RunStore, new_run_id
from scoregate.tracks import TrackSettings, gate_metrics, track_reports


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment (none of these change the answers, so none enter the cache key)."""

    limit: int | None = None
    concurrency: int | None = None
    model: str | None = None
    judge_model: str | None = None
    use_cache: bool = True
    resume: str | None = None
    mirror_mlflow: bool = True
    mirror_langfuse: bool = True
    prompt_label: str | None = None
    prompt_version: int | None = None
    retry_errors: bool = False
    quarantine: bool = False
    prompt_source: str = "auto"
    """`langfuse`, `local` (the files in prompts/; `run --no-langfuse`), or `auto`: Langfuse when configured."""
    eval_rows: bool = False
    """Also write every item as an MLflow evaluation row (costs ~57 ms per item on sqlite; see bench/README.md)."""
    write_report: bool = True
    """Write `runs/<id>/report.html` at the end (about 0.3 ms per item; `scoregate report RUN` writes it later)."""
    repeat: int = 1


@dataclass
class RunOutcome:
    """What a finished run left behind."""

    run_id: str
    store: RunStore
    summary: dict[str, Any]
    mirrors: dict[str, str] = field(default_factory=dict)
    mirror_errors: dict[str, str] = field(default_factory=dict)
    mirror_notes: list[str] = field(default_factory=list)
    nothing_to_do: str | None = None
    report: Path | None = None
    """`runs/<id>/report.html`, written at the end of the run (None when writing it failed)."""

    @property
    def failed_items(self) -> int:
        """How many records of the run failed in their newest version (what `--retry-errors` runs again): of
        repeat 1 (the run's record), and with `--repeat K` of every repeat."""
        repeats = self.summary.get("repeats") or {}
        if "failed_records" in repeats:
            return int(repeats["failed_records"])
        return int(self.summary.get("run_metrics", {}).get("error_count") or 0)

    @property
    def succeeded_items(self) -> int:
        """How many items of the run produced an output without error (in repeat 1, the run's record)."""
        metrics = self.summary.get("run_metrics", {})
        return int(metrics.get("items") or 0) - int(metrics.get("error_count") or 0)

    @property
    def verdict(self) -> str:
        """`pass`, `fail`, `incomplete` or `no_gates`."""
        return str(self.summary["verdict"])


def runs_dir(project: Project) -> Path:
    """Where the project's local run store lives."""
    return project.root / "runs"


def _evaluators(plan: ExperimentPlan) -> list[Evaluator]:
    return [build_evaluator(spec, default_judge_model=plan.judge_model_name) for spec in plan.evaluators.values()]


def score_columns(evaluators: list[Evaluator], plan: ExperimentPlan) -> list[tuple[str, DataType]]:
    """Return every score key a run of `plan` writes: pipeline stages', the evaluators', then composites."""
    keys: list[tuple[str, DataType]] = stage_score_columns(stage_evaluators(plan))
    keys += [k for e in evaluators for k in e.score_keys()]
    return keys + [(name, "numeric") for name in plan.composites]


def summarize_run(store: RunStore, plan: ExperimentPlan, project: Project) -> dict[str, Any]:
    """Aggregate the stored results, judge the gates, write and return summary.json."""
    from scoregate.analysis.regression import evaluate_regression_gate, is_regression_gate
    from scoregate.analysis.summary import RunAggregator

    settings = project.config.settings
    aggregator = RunAggregator(score_columns(_evaluators(plan), plan))
    for result in store.iter_results():
        aggregator.add(result)
    summary = aggregator.summary(
        confidence=settings.confidence_level, resamples=settings.bootstrap_resamples, seed=settings.seed
    )
    track_settings = TrackSettings(
        settings.min_coverage, settings.confidence_level, settings.bootstrap_resamples, settings.seed
    )
    tracks = track_reports(_evaluators(plan), store, summary, track_settings)
    summary["scores"].update(gate_metrics(tracks))  # run-level track metrics (micro values) a gate can name
    for block in tracks.values():  # each label kind a track counts joins the run's coverage block
        summary["coverage"].update({k: v for k, v in (block.get("coverage") or {}).items() if k.startswith("samples_")})
    gates: list[GateResult] = []
    for gate in plan.gates:
        if gate.datasets is not None and plan.dataset.name not in gate.datasets:
            continue
        if is_regression_gate(gate):
            gates.append(
                evaluate_regression_gate(
                    gate, store, project_root=project.root, runs_dir=runs_dir(project),
                    min_coverage=settings.min_coverage, confidence=settings.confidence_level,
                    resamples=settings.bootstrap_resamples, seed=settings.seed,
                )
            )  # fmt: skip
            continue
        column = aggregator.column(gate.metric) if aggregator.has_column(gate.metric) else None
        verdict = evaluate_gate(
            gate, summary, column=column, min_coverage=settings.min_coverage, item_ids=aggregator.item_ids
        )
        gates.append(_with_calibration(verdict, gate, project, plan))
    manifest = store.manifest
    summary = {
        "run_id": store.run_id,
        "experiment": plan.name,
        "dataset": plan.dataset.name,
        "prompts": {name: info["version"] for name, info in manifest["receipts"]["prompts"].items()},
        "model": plan.model_name,
        **summary,
        "gates": [g.to_dict() for g in gates],
        "verdict": overall_verdict(gates),
    }
    summary.update(tracks)
    if plan.spec.stages:
        from scoregate.analysis.stage_summary import stage_summary

        summary["stages"] = stage_summary(store.iter_results(), [stage.name for stage in plan.spec.stages])
    repeats = int(manifest.get("options", {}).get("repeat", 1))
    if repeats > 1:
        summary["repeats"] = consistency(iter_all_results(store), repeats, score_columns(_evaluators(plan), plan))
    store.write_summary(summary)
    return summary


def _with_calibration(result: GateResult, gate: GateSpec, project: Project, plan: ExperimentPlan) -> GateResult:
    """A gate that requires a calibrated judge takes the calibration's status unless it already failed."""
    need = gate.requires_calibration
    if need is None or result.status == "fail":
        return result
    from scoregate.analysis.calibration_runs import calibration_status

    status, detail = calibration_status(
        project, need.evaluator, plan.judge_model_name, floor=need.floor, metric=need.metric,
        score_key=need.score_key, stat=need.stat, min_pairs=need.min_pairs,
    )  # fmt: skip
    if status == "pass":
        return replace(result, detail=f"{result.detail}; judge calibrated: {detail}")
    return replace(result, status=status, detail=f"judge calibration {status}: {detail}")


def _open_or_create(
    project: Project, plan: ExperimentPlan, options: RunOptions, receipts: dict[str, Any]
) -> tuple[RunStore, RunLock]:
    if options.resume is None:
        manifest = {
            "run_id": "",
            "status": "running",
            "started_at": datetime.now(UTC).isoformat(),
            "options": {
                "limit": options.limit,
                "concurrency": options.concurrency,
                "cache": options.use_cache,
                "repeat": options.repeat,
            },
            "receipts": receipts,
            "pid": os.getpid(),
        }
        run_id = new_run_id(plan.name)
        manifest["run_id"] = run_id
        store = RunStore.create(runs_dir(project), run_id, manifest)
        lock = RunLock(store.directory)
        lock.acquire()
        return store, lock
    store = RunStore.open(runs_dir(project), options.resume)
    lock = RunLock(store.directory)
    lock.acquire()
    try:
        _check_resumable(store, options, receipts)
        store.repair()
        if options.quarantine:
            store.quarantine()
        store.done_ids()  # a damaged line stops here, naming file:line, before the run is marked running
        changes: dict[str, Any] = {"status": "running", "resumed_at": datetime.now(UTC).isoformat()}
        if options.retry_errors:
            retried = failed_records(store)  # every repeat's: a failed repeat 2..K is retried too
            store.forget_mirrored_items({repeat_key(item_id, repeat) for item_id, repeat in retried})
            changes["revision"] = int(store.manifest.get("revision", 0)) + 1
        store.update_manifest(**changes, pid=os.getpid())
    except BaseException:
        lock.release()
        raise
    return store, lock


def _check_resumable(store: RunStore, options: RunOptions, receipts: dict[str, Any]) -> None:
    conflicts = resume_conflicts(store.manifest["receipts"], receipts)
    if conflicts:
        raise ScoregateError(
            f"cannot resume {options.resume}: {'; '.join(conflicts)} since the run started",
            hint="resuming would mix two setups in one run; undo the change, or start a new run instead",
        )


def _finish_mirror(store: RunStore, project: Project, options: RunOptions, reason: str) -> RunOutcome:
    """A finished run has nothing to run; complete its MLflow mirror if a kill cut it short, else do nothing."""
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=store.summary or {}, nothing_to_do=reason)
    if not options.mirror_mlflow or "mlflow_run_id" in store.links:
        return outcome
    from scoregate.sinks.mlflow_sink import mirror_run

    with RunLock(store.directory):
        try:
            outcome.mirrors["mlflow"] = mirror_run(store, project_root=project.root)
        except Exception as exc:  # reported; redone with `scoregate mlflow-sync`
            outcome.mirror_errors["mlflow"] = redact(f"{type(exc).__name__}: {exc}")
    done = "completed its MLflow mirror" if "mlflow" in outcome.mirrors else "its MLflow mirror failed again"
    outcome.nothing_to_do = f"{reason}\n{done} (it had not finished)"
    return outcome


def _nothing_to_resume(store: RunStore, options: RunOptions) -> str | None:
    """Say why resuming this run would do nothing (finished, and no failed item asked for), else None."""
    if options.quarantine:
        return None
    summary = store.summary
    if store.manifest.get("status") != "finished" or summary is None:
        return None
    if store.needs_repair() or len(store.done_ids()) < int(summary.get("run_metrics", {}).get("items") or 0):
        return None  # damaged after it finished: resuming redoes what was lost
    run_id = store.run_id
    if not options.retry_errors:
        return (
            f"run {run_id} already finished; nothing to resume. To mirror it again: "
            f"`scoregate mlflow-sync {run_id}` (or `scoregate langfuse-sync {run_id}`); "
            f"to redo its failed items: `scoregate run --resume {run_id} --retry-errors`"
        )
    if not failed_records(store):
        return f"run {run_id} already finished and no item failed; nothing to retry"
    return None


def run_experiment(root: Path, experiment: str, options: RunOptions, *, console: Console | None = None) -> RunOutcome:
    """Run (or resume) one experiment and return its outcome; raise ScoregateError on bad input."""
    console = console or Console(stderr=True)
    project = load_project(root)
    register_secret_env(spec.api_key_env for spec in project.config.models.values())
    if options.resume is not None:
        resumed = RunStore.open(runs_dir(project), options.resume)
        if (reason := _nothing_to_resume(resumed, options)) is not None:
            return _finish_mirror(resumed, project, options, reason)
        previous = resumed.manifest
        experiment = previous["receipts"]["experiment"]
        saved = previous["options"]
        options = replace(
            options,
            limit=saved["limit"],
            concurrency=options.concurrency or saved["concurrency"],
            repeat=saved.get("repeat", 1),
            model=previous["receipts"]["model"]["name"],
            judge_model=(previous["receipts"].get("judge_model") or {}).get("name"),
        )
    prompt_versions = _use_langfuse_prompts(project, experiment, options, resumed=previous_receipts(project, options))
    plan = plan_experiment(project, experiment, model=options.model, judge_model=options.judge_model)
    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if options.use_cache else None
    breaker = CircuitBreaker(project.config.settings.max_consecutive_failures)
    caller = ModelCaller(project.config.models, default_judge=plan.judge_model_name, cache=cache, breaker=breaker)
    prompt_versions = {
        name: prompt_versions.get(name) or local_prompt_version(spec) for name, spec in plan.prompts.items()
    }
    console.print(_prompt_source_line(prompt_versions, options), highlight=False, soft_wrap=True)
    model_names = _models_used(plan)
    endpoints = {name: caller.provider(name).endpoint for name in dict.fromkeys([plan.model_name, *model_names])}
    receipts = build_receipts(project, plan, prompt_versions=prompt_versions, endpoints=endpoints)
    receipts.update(repeats_receipt(options.repeat, use_cache=options.use_cache))
    receipts.update(stages_receipt(plan, prompt_versions))
    # before the run directory exists: an unreachable URL leaves no run
    asyncio.run(caller.preflight(model_names, project_root=project.root))
    store, lock = _open_or_create(project, plan, options, receipts)
    _warm_summary_imports()
    try:
        return _run_locked(store, plan, project, options, caller, prompt_versions, console, cache)
    finally:
        lock.release()


def _mark_failed(store: RunStore, error: BaseException) -> None:
    """Record `failed` and the reason in the manifest, if the disk still lets us (the first error wins)."""
    reason = error.message if isinstance(error, ScoregateError) else f"{type(error).__name__}: {error}"
    with suppress(OSError):
        store.close()
    with suppress(OSError, ScoregateError):
        store.update_manifest(status="failed", failure=redact(reason))


def _run_locked(
    store: RunStore,
    plan: ExperimentPlan,
    project: Project,
    options: RunOptions,
    caller: ModelCaller,
    prompt_versions: dict[str, str],
    console: Console,
    cache: ResponseCache | None,
) -> RunOutcome:
    try:
        with sigterm_as_interrupt():
            asyncio.run(_execute(plan, project, options, caller, store, prompt_versions, console))
    except KeyboardInterrupt as exc:
        store.close()
        store.update_manifest(status="interrupted")
        done = len(store.done_ids())
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        code = ExitCode.TERMINATED if isinstance(exc, Terminated) else ExitCode.INTERRUPTED
        raise RunInterrupted(
            f"run {store.run_id} {how}; {done} finished item(s) are kept in {store.directory}",
            hint=f"resume with `scoregate run --resume {store.run_id}`",
            exit_code=code,
        ) from None
    except CircuitOpen as exc:
        store.close()
        store.update_manifest(status="interrupted", stopped_because=redact(exc.reason))
        raise RunInterrupted(
            f"run {store.run_id} stopped early: {exc.count} calls in a row failed, the last with: {redact(exc.reason)}",
            hint=f"fix the endpoint, then redo the failed items with "
            f"`scoregate run --resume {store.run_id} --retry-errors`",
        ) from None
    except BaseException as exc:
        _mark_failed(store, exc)
        raise
    finally:
        if cache is not None:
            cache.close()
    store.close()
    store.update_manifest(status="finished", finished_at=datetime.now(UTC).isoformat())
    summary = summarize_run(store, plan, project)
    write_telemetry(store)
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=summary)
    if options.write_report:
        _write_report(store, project, outcome)
    if options.mirror_mlflow:
        from scoregate.sinks.mlflow_sink import mirror_run  # mlflow imports slowly; load it only when used

        try:
            outcome.mirrors["mlflow"] = mirror_run(store, project_root=project.root)
            if options.eval_rows:
                from scoregate.sinks.mlflow_eval_rows import log_item_rows

                rows = log_item_rows(store, project_root=project.root, mlflow_run_id=outcome.mirrors["mlflow"])
                outcome.mirror_notes.append(f"mlflow: {rows} evaluation rows (one per item) on the run")
        except Exception as exc:  # a sink failure must not lose the run; it is reported and can be redone
            outcome.mirror_errors["mlflow"] = redact(f"{type(exc).__name__}: {exc}")
    if options.mirror_langfuse:
        _mirror_langfuse(store, project, outcome)
    return outcome


def _warm_summary_imports() -> None:
    """Import the summary's statistics (scipy, ~0.6 s of CPU) in a thread while the items wait on the model."""

    def load() -> None:
        import scoregate.analysis.regression
        import scoregate.analysis.summary  # noqa: F401

    threading.Thread(target=load, name="scoregate-warm-imports", daemon=True).start()


def _write_report(store: RunStore, project: Project, outcome: RunOutcome) -> None:
    """Write the run's HTML report before the mirrors, so MLflow logs it as an artifact; a failure is reported."""
    from scoregate.report.write import project_report_options, write_run_report

    try:
        outcome.report = write_run_report(store, project_report_options(project.root))
    except Exception as exc:  # the run is stored; `scoregate report RUN` writes it again
        outcome.mirror_errors["report"] = redact(f"{type(exc).__name__}: {exc}")


def run_models(
    root: Path, experiment: str, models: list[str], options: RunOptions, *, console: Console | None = None
) -> list[RunOutcome]:
    """Run one experiment once per model, on the same items, one after another; return the outcomes in order."""
    if options.resume is not None or options.retry_errors:
        raise ScoregateError("--models starts new runs; resume each run by its id instead")
    known = load_project(root).config.models
    unknown = [name for name in models if name not in known]
    if unknown:
        raise ScoregateError(
            f"--models: no model {', '.join(map(repr, unknown))} under `models:` in scoregate.yaml "
            f"(defined: {', '.join(sorted(known)) or 'none'})",
            hint="every name is checked before the first run starts; fix the list and run again",
        )
    return [run_experiment(root, experiment, replace(options, model=name), console=console) for name in models]


def previous_receipts(project: Project, options: RunOptions) -> dict[str, Any] | None:
    """The receipts of the run being resumed, or None for a new run."""
    if options.resume is None:
        return None
    receipts: dict[str, Any] = RunStore.open(runs_dir(project), options.resume).manifest["receipts"]
    return receipts


def _use_langfuse_prompts(
    project: Project, experiment: str, options: RunOptions, *, resumed: dict[str, Any] | None
) -> dict[str, str]:
    """With Langfuse as the prompt source, swap in the prompts Langfuse serves; never fall back silently.

    Returns prompt name → version for the receipts; empty when the local files are used.
    """
    from scoregate.sinks.langfuse.prompt_source import choose_prompt_source, resolve_prompts

    asked = options.prompt_label is not None or options.prompt_version is not None
    spec = project.config.experiments.get(experiment)
    versions = {n: p.get("langfuse_version") for n, p in (resumed or {}).get("prompts", {}).items()}
    from_langfuse = choose_prompt_source(options.prompt_source, asked=asked, resumed=any(versions.values()))
    if not from_langfuse or spec is None:
        return {}
    names = route_prompts(spec.prompt)
    if resumed is not None:
        if not any(versions.values()):
            return {}
        resolved = {}
        for name in names:
            resolved.update(resolve_prompts(project, [name], label=None, version=versions.get(name)))
    else:
        resolved = resolve_prompts(
            project, names, label=options.prompt_label, version=options.prompt_version, source=options.prompt_source
        )
    for name, found in resolved.items():
        project.prompts[name] = found.spec
    return {name: found.version for name, found in resolved.items()}


def _prompt_source_line(versions: dict[str, str], options: RunOptions) -> str:
    """Say where the run's prompts come from (the receipts record it per prompt as `source`)."""
    langfuse = {n: v for n, v in versions.items() if v.isdigit()}
    if langfuse:
        return "prompts: from Langfuse " + ", ".join(f"{n} v{v}" for n, v in langfuse.items())
    return f"prompts: local files (prompt source {options.prompt_source})"


def _mirror_langfuse(store: RunStore, project: Project, outcome: RunOutcome) -> None:
    from scoregate.sinks.langfuse.client import NOT_CONFIGURED, LangfuseSettings
    from scoregate.sinks.langfuse.experiment_mirror import mirror_run_to_langfuse

    if LangfuseSettings.from_env() is None:
        outcome.mirror_notes.append(f"langfuse: skipped — {NOT_CONFIGURED}")
        return
    try:
        report = mirror_run_to_langfuse(store, project)
    except Exception as exc:  # reported, and redone later with `scoregate langfuse-sync`
        outcome.mirror_errors["langfuse"] = redact(f"{type(exc).__name__}: {exc}")
        return
    outcome.mirror_notes += [redact(line) for line in report.lines()]
    if report.experiment_url:
        outcome.mirrors["langfuse"] = report.experiment_url
    if not report.complete:
        outcome.mirror_errors["langfuse"] = redact("; ".join(report.problems))


def _models_used(plan: ExperimentPlan) -> list[str]:
    judges = [spec for spec in plan.evaluators.values() if isinstance(spec, LlmJudgeSpec | FactRecallSpec)]
    task = [plan.model_name] if plan.spec.output_from == "model" else []
    judges += [s for specs in plan.stage_evaluators.values() for s in specs.values() if isinstance(s, LlmJudgeSpec)]
    stages = stage_models(plan.spec, plan.model_name)
    names = stages + task + [spec.model or plan.judge_model_name for spec in judges]
    return list(dict.fromkeys(names))


async def _execute(
    plan: ExperimentPlan,
    project: Project,
    options: RunOptions,
    caller: ModelCaller,
    store: RunStore,
    prompt_versions: dict[str, str],
    console: Console,
) -> None:
    try:
        pipeline = ItemPipeline(
            route=plan.route,
            prompts=plan.prompts,
            prompt_versions=prompt_versions,
            model_name=plan.model_name,
            caller=caller,
            evaluators=_evaluators(plan),
            composites=plan.composites,
            output_from=plan.spec.output_from,
        )
        if plan.spec.stages:
            pipeline = staged_pipeline(pipeline, plan)
        done = store.done_ids(retry_errors=options.retry_errors)
        per_repeat = min(plan.dataset_scan.count, options.limit) if options.limit else plan.dataset_scan.count
        concurrency = options.concurrency or plan.spec.concurrency or project.config.settings.concurrency
        later = (
            done_by_repeat(store, retry_errors=options.retry_errors) if options.repeat > 1 else {}
        )  # repeats 2..K resume on their own
        done_by = {1: done, **{r: later.get(r, set()) for r in range(2, options.repeat + 1)}}
        total, already = per_repeat * options.repeat, sum(len(ids) for ids in done_by.values())
        final_stage = plan.spec.stages[-1].name if plan.spec.stages else None
        live = LiveProgress(
            store, runs_dir(project), experiment=plan.name, total=total, already_done=already, final_stage=final_stage
        )
        with RunProgress(total, already_done=already, console=console) as progress, live:
            progress.listeners.append(live.observe)
            for repeat in range(1, options.repeat + 1):
                await execute(
                    pipeline_for_repeat(pipeline, repeat),
                    pending_items(plan.dataset.path, done_by[repeat], options.limit),
                    store,
                    concurrency=concurrency,
                    progress=progress,
                    breaker=caller.breaker,
                )
    finally:
        await caller.aclose()
