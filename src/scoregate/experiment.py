"""Run an experiment end to end: plan, execute (resumable), summarise, gate, mirror. The library entry point."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from scoregate.analysis.consistency import consistency
from scoregate.analysis.gates import GateResult, evaluate_gate, overall_verdict
from scoregate.analysis.regression import evaluate_regression_gate, is_regression_gate
from scoregate.analysis.stage_summary import stage_summary
from scoregate.analysis.summary import RunAggregator
from scoregate.catalog.models import GateSpec, LlmJudgeSpec
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.project import Project, load_project
from scoregate.catalog.routing import route_prompts
from scoregate.catalog.stages import stage_models
from scoregate.engine.cache import ResponseCache
from scoregate.engine.calls import ModelCaller
from scoregate.engine.item import ItemPipeline
from scoregate.engine.live import LiveProgress
from scoregate.engine.progress import RunProgress
from scoregate.engine.repeats import done_by_repeat, iter_all_results, pipeline_for_repeat, repeats_receipt
from scoregate.engine.runner import execute, pending_items
from scoregate.engine.stages import stage_evaluators, stage_score_columns, staged_pipeline, stages_receipt
from scoregate.errors import RunInterrupted, ScoregateError
from scoregate.extraction.run_summary import extraction_run_summary
from scoregate.receipts import build_receipts, local_prompt_version
from scoregate.records import DataType
from scoregate.scoring.base import Evaluator
from scoregate.scoring.registry import build_evaluator
from scoregate.sinks.telemetry import write_telemetry
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
    if plan.spec.stages:
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


def _open_or_create(project: Project, plan: ExperimentPlan, options: RunOptions, receipts: dict[str, Any]) -> RunStore:
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
        }
        run_id = new_run_id(plan.name)
        manifest["run_id"] = run_id
        return RunStore.create(runs_dir(project), run_id, manifest)
    store = RunStore.open(runs_dir(project), options.resume)
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
    store.repair()
    store.update_manifest(status="running", resumed_at=datetime.now(UTC).isoformat())
    return store


def run_experiment(root: Path, experiment: str, options: RunOptions, *, console: Console | None = None) -> RunOutcome:
    """Run (or resume) one experiment and return its outcome; raise ScoregateError on bad input."""
    console = console or Console(stderr=True)
    project = load_project(root)
    if options.resume is not None:
        previous = RunStore.open(runs_dir(project), options.resume).manifest
        experiment = previous["receipts"]["experiment"]
        saved = previous["options"]
        options = replace(
            options,
            limit=saved["limit"],
            concurrency=options.concurrency or saved["concurrency"],
            repeat=saved.get("repeat", 1),
            model=previous["receipts"]["model"]["name"],
        )
    prompt_versions = _use_langfuse_prompts(project, experiment, options, resumed=previous_receipts(project, options))
    plan = plan_experiment(project, experiment, model=options.model)
    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if options.use_cache else None
    caller = ModelCaller(project.config.models, default_judge=plan.judge_model_name, cache=cache)
    prompt_versions = {
        name: prompt_versions.get(name) or local_prompt_version(spec) for name, spec in plan.prompts.items()
    }
    model_names = _models_used(plan)
    endpoints = {name: caller.provider(name).endpoint for name in dict.fromkeys([plan.model_name, *model_names])}
    receipts = build_receipts(project, plan, prompt_versions=prompt_versions, endpoints=endpoints)
    receipts.update(repeats_receipt(options.repeat, use_cache=options.use_cache))
    receipts.update(stages_receipt(plan, prompt_versions))
    asyncio.run(caller.preflight(model_names))  # before the run directory exists: an unreachable URL leaves no run
    store = _open_or_create(project, plan, options, receipts)
    try:
        asyncio.run(_execute(plan, project, options, caller, store, prompt_versions, console))
    except KeyboardInterrupt:
        store.close()
        store.update_manifest(status="interrupted")
        done = len(store.done_ids())
        raise RunInterrupted(
            f"run {store.run_id} interrupted; {done} finished item(s) are kept in {store.directory}",
            hint=f"resume with `scoregate run --resume {store.run_id}`",
        ) from None
    except BaseException:
        store.close()
        store.update_manifest(status="failed")
        raise
    finally:
        if cache is not None:
            cache.close()
    store.close()
    store.update_manifest(status="finished", finished_at=datetime.now(UTC).isoformat())
    summary = summarize_run(store, plan, project)
    write_telemetry(store)
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=summary)
    if options.mirror_mlflow:
        from scoregate.sinks.mlflow_sink import mirror_run  # mlflow imports slowly; load it only when used

        try:
            outcome.mirrors["mlflow"] = mirror_run(store, project_root=project.root)
        except Exception as exc:  # a sink failure must not lose the run; it is reported and can be redone
            outcome.mirror_errors["mlflow"] = f"{type(exc).__name__}: {exc}"
    if options.mirror_langfuse:
        _mirror_langfuse(store, project, outcome)
    return outcome


def run_models(
    root: Path, experiment: str, models: list[str], options: RunOptions, *, console: Console | None = None
) -> list[RunOutcome]:
    """Run one experiment once per model, on the same items, one after another; return the outcomes in order."""
    if options.resume is not None:
        raise ScoregateError("--models starts new runs; resume each run by its id instead")
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
        outcome.mirror_errors["langfuse"] = f"{type(exc).__name__}: {exc}"
        return
    outcome.mirror_notes += report.lines()
    if report.experiment_url:
        outcome.mirrors["langfuse"] = report.experiment_url
    if not report.complete:
        outcome.mirror_errors["langfuse"] = "; ".join(report.problems)


def _models_used(plan: ExperimentPlan) -> list[str]:
    judges = [spec for spec in plan.evaluators.values() if isinstance(spec, LlmJudgeSpec)]
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
        done = store.done_ids()
        per_repeat = min(plan.dataset_scan.count, options.limit) if options.limit else plan.dataset_scan.count
        concurrency = options.concurrency or plan.spec.concurrency or project.config.settings.concurrency
        later = done_by_repeat(store) if options.repeat > 1 else {}  # repeats 2..K resume on their own
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
                )
    finally:
        await caller.aclose()
