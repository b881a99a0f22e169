"""Run an experiment end to end: plan, execute (resumable), summarise, gate, mirror. The library entry point."""

from __future__ import annotations

import asyncio
import os
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from scoregate.analysis.gates import GateResult, evaluate_gate, overall_verdict
from scoregate.analysis.regression import evaluate_regression_gate, is_regression_gate
from scoregate.analysis.summary import RunAggregator
from scoregate.catalog.models import GateSpec, LlmJudgeSpec
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.project import Project, load_project
from scoregate.catalog.routing import route_prompts
from scoregate.engine.breaker import CircuitBreaker, CircuitOpen
from scoregate.engine.cache import ResponseCache
from scoregate.engine.calls import ModelCaller
from scoregate.engine.item import ItemPipeline
from scoregate.engine.progress import RunProgress
from scoregate.engine.runner import execute, pending_items
from scoregate.engine.termination import Terminated, sigterm_as_interrupt
from scoregate.errors import ExitCode, RunInterrupted, ScoregateError
from scoregate.extraction.run_summary import extraction_run_summary
from scoregate.receipts import build_receipts, local_prompt_version
from scoregate.records import DataType
from scoregate.redaction import redact, register_secret_env
from scoregate.run_lock import RunLock
from scoregate.scoring.base import Evaluator
from scoregate.scoring.registry import build_evaluator
from scoregate.store import RunStore, new_run_id


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment (none of these change the answers, so none enter the cache key)."""

    limit: int | None = None
    concurrency: int | None = None
    model: str | None = None
    use_cache: bool = True
    resume: str | None = None
    mirror_mlflow: bool = True
    mirror_langfuse: bool = True
    prompt_label: str | None = None
    prompt_version: int | None = None
    retry_errors: bool = False
    quarantine: bool = False


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

    @property
    def failed_items(self) -> int:
        """How many items of the run have a failed newest record (what `--retry-errors` runs again)."""
        return int(self.summary.get("run_metrics", {}).get("error_count") or 0)

    @property
    def succeeded_items(self) -> int:
        """How many items of the run produced an output without error."""
        items = int(self.summary.get("run_metrics", {}).get("items") or 0)
        return items - self.failed_items

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
    """Return every score key a run of `plan` writes, evaluators first, then composites."""
    keys: list[tuple[str, DataType]] = [k for e in evaluators for k in e.score_keys()]
    return keys + [(name, "numeric") for name in plan.composites]


def summarize_run(store: RunStore, plan: ExperimentPlan, project: Project) -> dict[str, Any]:
    """Aggregate the stored results, judge the gates, write and return summary.json."""
    settings = project.config.settings
    aggregator = RunAggregator(score_columns(_evaluators(plan), plan))
    for result in store.iter_results():
        aggregator.add(result)
    summary = aggregator.summary(
        confidence=settings.confidence_level, resamples=settings.bootstrap_resamples, seed=settings.seed
    )
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
        column = aggregator.column(gate.metric) if gate.metric in summary["scores"] else None
        verdict = evaluate_gate(gate, summary, column=column, min_coverage=settings.min_coverage)
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
    summary.update(
        extraction_run_summary(
            _evaluators(plan), store, summary, min_coverage=settings.min_coverage,
            confidence=settings.confidence_level, resamples=settings.bootstrap_resamples, seed=settings.seed,
        )
    )  # fmt: skip
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
            "options": {"limit": options.limit, "concurrency": options.concurrency, "cache": options.use_cache},
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
            retried = store.error_ids()
            store.forget_mirrored_items(retried)
            changes["revision"] = int(store.manifest.get("revision", 0)) + 1
        store.update_manifest(**changes, pid=os.getpid())
    except BaseException:
        lock.release()
        raise
    return store, lock


def _check_resumable(store: RunStore, options: RunOptions, receipts: dict[str, Any]) -> None:
    old = store.manifest["receipts"]
    for what, before, now in [
        ("dataset", old["dataset"]["content_hash"], receipts["dataset"]["content_hash"]),
        ("scoregate.yaml", old["config_hash"], receipts["config_hash"]),
        ("prompts", old["prompts"], receipts["prompts"]),
        ("evaluators", old["evaluators"], receipts["evaluators"]),
    ]:
        if before != now:
            raise ScoregateError(
                f"cannot resume {options.resume}: the {what} changed since the run started",
                hint="resuming would mix two setups in one run; start a new run instead",
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
    if not store.error_ids():
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
            model=previous["receipts"]["model"]["name"],
        )
    prompt_versions = _use_langfuse_prompts(project, experiment, options, resumed=previous_receipts(project, options))
    plan = plan_experiment(project, experiment, model=options.model)
    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if options.use_cache else None
    breaker = CircuitBreaker(project.config.settings.max_consecutive_failures)
    caller = ModelCaller(project.config.models, default_judge=plan.judge_model_name, cache=cache, breaker=breaker)
    prompt_versions = {
        name: prompt_versions.get(name) or local_prompt_version(spec) for name, spec in plan.prompts.items()
    }
    model_names = _models_used(plan)
    endpoints = {name: caller.provider(name).endpoint for name in dict.fromkeys([plan.model_name, *model_names])}
    receipts = build_receipts(project, plan, prompt_versions=prompt_versions, endpoints=endpoints)
    # before the run directory exists: an unreachable URL leaves no run
    asyncio.run(caller.preflight(model_names, project_root=project.root))
    store, lock = _open_or_create(project, plan, options, receipts)
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
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=summary)
    if options.mirror_mlflow:
        from scoregate.sinks.mlflow_sink import mirror_run  # mlflow imports slowly; load it only when used

        try:
            outcome.mirrors["mlflow"] = mirror_run(store, project_root=project.root)
        except Exception as exc:  # a sink failure must not lose the run; it is reported and can be redone
            outcome.mirror_errors["mlflow"] = redact(f"{type(exc).__name__}: {exc}")
    if options.mirror_langfuse:
        _mirror_langfuse(store, project, outcome)
    return outcome


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
    """With Langfuse configured (or a prompt label/version asked for), swap in the prompts Langfuse serves.

    Returns prompt name → version for the receipts; empty when the local files are used.
    """
    from scoregate.sinks.langfuse.client import LangfuseSettings
    from scoregate.sinks.langfuse.prompt_source import resolve_prompts

    asked = options.prompt_label is not None or options.prompt_version is not None
    if LangfuseSettings.from_env() is None and not asked:
        return {}
    spec = project.config.experiments.get(experiment)
    if spec is None:
        return {}
    names = route_prompts(spec.prompt)
    if resumed is not None:
        versions = {n: p.get("langfuse_version") for n, p in resumed["prompts"].items()}
        if not any(versions.values()):
            return {}
        resolved = {}
        for name in names:
            resolved.update(resolve_prompts(project, [name], label=None, version=versions.get(name)))
    else:
        resolved = resolve_prompts(project, names, label=options.prompt_label, version=options.prompt_version)
    for name, found in resolved.items():
        project.prompts[name] = found.spec
    return {name: found.version for name, found in resolved.items()}


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
    judges = [spec for spec in plan.evaluators.values() if isinstance(spec, LlmJudgeSpec)]
    task = [plan.model_name] if plan.spec.output_from == "model" else []
    names = task + [spec.model or plan.judge_model_name for spec in judges]
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
        done = store.done_ids(retry_errors=options.retry_errors)
        total = min(plan.dataset_scan.count, options.limit) if options.limit else plan.dataset_scan.count
        concurrency = options.concurrency or plan.spec.concurrency or project.config.settings.concurrency
        with RunProgress(total, already_done=len(done), console=console) as progress:
            await execute(
                pipeline,
                pending_items(plan.dataset.path, done, options.limit),
                store,
                concurrency=concurrency,
                progress=progress,
            )
    finally:
        await caller.aclose()
