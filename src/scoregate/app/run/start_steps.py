"""The steps of a run's start, each taking the `StartingRun` and adding to it, in the order `START_STEPS` gives:
the sinks' own checks, the prompts, the plan, a stop-early plan, the budget gate, the model caller (and a resume's
check of what changed), the models' one-token check, the time budget's floor from its replies, a cascade judge's
saved threshold, then the store.

Every step before `models_check_step` spends no model request, so a run refused there spends none; the store is
made last, so a refused run leaves no run behind. The whole run's order: `scoregate.app.run.steps`.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scoregate.app.run.cascade_step import cascade_step
from scoregate.app.run.prompt_step import prompt_source_line, use_langfuse_prompts
from scoregate.app.run.receipts import build_receipts, local_prompt_version
from scoregate.app.run.resumption import check_resumable, forget_mirrored
from scoregate.app.run.starting_run import StartingRun, StartStep
from scoregate.calls.caller import ModelCaller
from scoregate.catalog.plan import models_used, plan_experiment
from scoregate.engine.preflight import BackgroundPreflight
from scoregate.providers.base import ProviderContext
from scoregate.store.run_store import RunStore
from scoregate.support.redaction import redact
from scoregate.support.start_gc import release_collector
from scoregate.support.terminal_text import print_wrapped

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "START_STEPS",
    "budget_step",
    "caller_step",
    "cascade_step",
    "check_floor_step",
    "models_check_step",
    "plan_step",
    "prompts_step",
    "sinks_step",
    "stop_early_step",
    "store_step",
]


def sinks_step(run: StartingRun) -> None:
    """Each sink the run mirrors to checks its tracker (`CheckedBeforeRunSink`). The check goes first in the models'
    check's thread, before its request: a refusal spends no model call and leaves no run, and the sinks load there,
    not before the check goes out."""
    project, skip = run.project, run.options.mirrors.off

    def check_sinks() -> None:
        from scoregate.sinks.contract import SinkContext
        from scoregate.sinks.mirror_all import check_sinks_before_run

        check_sinks_before_run(SinkContext(project.root, loaded=project), skip=skip)

    run.sinks_check = check_sinks


def prompts_step(run: StartingRun) -> None:
    """With Langfuse as the prompt source, the prompts it serves replace the files' (a resume keeps its versions)."""
    receipts = run.resumed.manifest_record.receipts if run.resumed is not None else None
    run.prompt_versions = use_langfuse_prompts(run.project, run.experiment, run.options, resumed=receipts)


def plan_step(run: StartingRun) -> None:
    """Plan the experiment: every file and item is checked here. A shard's plan, built when its run id was derived,
    is kept unless Langfuse's prompts replaced the files' since."""
    if run.plan is not None and not run.prompt_versions:
        return
    models = run.options.models
    run.plan = plan_experiment(
        run.project, run.experiment, model=models.model, judge_model=models.judge_model, model_from=models.model_from
    )


def stop_early_step(run: StartingRun) -> None:
    """A stop-early run's plan (its gate, its batches); a bad stop-early request is refused here."""
    if run.options.stop_early.on or run.options.stop_early.against is not None:
        from scoregate.app.run.stop_early import plan_stop_early

        run.stop = plan_stop_early(run.project, run.planned, run.options)


def budget_step(run: StartingRun) -> None:
    """Refuse a run whose forecast exceeds its budget, before any request (the models' check's too)."""
    from scoregate.app.run.budget_gate import refuse_over_budget

    run.unchecked = refuse_over_budget(run.project, run.planned, run.options, run.resumed, run.console)


def caller_step(run: StartingRun) -> None:
    """The response cache and the model caller; a resume whose receipts changed is refused here, still unspent."""
    from scoregate.calls.breaker import CircuitBreaker
    from scoregate.calls.cache import ResponseCache

    project, plan = run.project, run.planned
    run.cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if run.options.use_cache else None
    breaker = CircuitBreaker(project.config.settings.max_consecutive_failures)
    context = ProviderContext(project.root, project.config.settings)
    run.caller = ModelCaller(
        project.config.models, default_judge=plan.judge_model_name, cache=run.cache, breaker=breaker, context=context
    )
    run.prompt_versions = {
        name: run.prompt_versions.get(name) or local_prompt_version(spec) for name, spec in plan.prompts.items()
    }
    if run.resumed is not None:
        run.receipts = _receipts(run)
        check_resumable(run.resumed, run.options, run.receipts)


def models_check_step(run: StartingRun) -> None:
    """Send the models' one-token check (before the run's directory exists: an unreachable URL leaves no run) and
    wait for it; a new run's receipts are made while it is out."""
    plan = run.planned
    names = models_used(plan)
    settings = run.project.config.settings
    run.check = BackgroundPreflight(
        run.project.config.models, names, default_judge=plan.judge_model_name, project_root=run.project.root,
        settings=settings, first=run.sinks_check,
    ).start()  # fmt: skip
    run.out = out = run.console or _stderr_console()  # the run's output starts once the check is out
    print_wrapped(out, prompt_source_line(run.prompt_versions, run.options))
    if run.receipts is None:
        run.receipts = _receipts(run)
    _say_what_providers_note(names, run.calling, out)
    import scoregate.app.run.run_execution  # noqa: F401  (loaded while the check waits on the network)

    release_collector()  # held since the command started (`scoregate.cli.main`): the start is over
    run.check.wait(every_s=run.options.heartbeat_s, beat=lambda waited, what: _say_check_waits(out, waited, what))


def check_floor_step(run: StartingRun) -> None:
    """A time budget no past run could check: the check's replies set a floor, and a run below it is refused."""
    if run.unchecked is not None:
        from scoregate.app.run.budget_gate import refuse_below_check_floor

        refuse_below_check_floor(run.project, run.unchecked, run.options, run.checking.records, run.output)


def store_step(run: StartingRun) -> None:
    """The run's store: a new one (the way's: a run's or a shard's), or the resumed one, marked running."""
    checked = [
        {**asdict(record), "error": redact(record.error) if record.error else None} for record in run.checking.records
    ]
    if run.resumed is None:
        manifest = {
            "run_id": "",
            "status": "running",
            "started_at": datetime.now(UTC).isoformat(),
            "options": run.options.recorded(),
            "receipts": run.receipts,
            "pid": os.getpid(),
            "model_checks": checked,
        }
        run.store = run.way.create(run.project, run.planned, run.options, manifest)
        return
    run.store = _reopen(run, run.resumed, checked)


START_STEPS: list[StartStep] = [
    sinks_step,
    prompts_step,
    plan_step,
    stop_early_step,
    budget_step,
    caller_step,
    models_check_step,
    check_floor_step,
    cascade_step,
    store_step,
]
"""What a run does before its first item, in order (read when a run starts, so a test may insert one)."""


def _reopen(run: StartingRun, store: RunStore, checked: list[dict[str, Any]]) -> RunStore:
    """The resumed store (its lock held by `one_run.run_one`), repaired and marked running again."""
    store.repair()
    if run.options.resume.quarantine:
        store.quarantine()
    store.done_ids()  # a damaged line stops here, naming file:line, before the run is marked running
    changes: dict[str, Any] = {"status": "running", "resumed_at": datetime.now(UTC).isoformat()}
    stored = store.manifest_record
    changes["model_checks"] = list(stored.model_checks or []) + checked
    if stored.stop_early is not None:  # a stopped-early run goes on to the full dataset
        from scoregate.app.run.stop_early import continued_changes

        changes.update(continued_changes(stored))
    if run.options.resume.retry_errors:
        from scoregate.store.repeats import failed_records, repeat_key

        retried = failed_records(store)  # every repeat's: a failed repeat 2..K is retried too
        forget_mirrored(run.project, store, {repeat_key(item_id, repeat) for item_id, repeat in retried})
        changes["revision"] = (stored.revision or 0) + 1
    store.update_manifest(**changes, pid=os.getpid())
    return store


def _receipts(run: StartingRun) -> dict[str, Any]:
    """What the run uses, hashed: a resume is refused when a part of it changed."""
    from scoregate.engine.repeats import repeats_receipt
    from scoregate.engine.stages import stages_receipt

    plan, caller = run.planned, run.calling
    names = [plan.model_name, *models_used(plan)]
    endpoints = {name: caller.provider(name).endpoint for name in dict.fromkeys(names)}
    receipts = build_receipts(run.project, plan, prompt_versions=run.prompt_versions, endpoints=endpoints)
    receipts.update(repeats_receipt(run.options.selection.repeat, use_cache=run.options.use_cache))
    receipts.update(stages_receipt(plan, run.prompt_versions))
    return receipts


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _say_check_waits(console: Console, waited: float, what: str) -> None:
    """The heartbeat of the models' check: which model it waits on, and for how long."""
    from scoregate.support.figures import clock_text

    said = f"model check: waiting on {what} for {clock_text(waited)} (a one-token reply; a busy server answers late)"
    print_wrapped(console, said, first="  ", indent="    ")


def _say_what_providers_note(names: list[str], caller: ModelCaller, console: Console) -> None:
    """Print what the run's providers say at its start (the local model: whose shared server it queues on)."""
    providers = {caller.provider(name).endpoint: caller.provider(name) for name in names}
    for _endpoint, provider in sorted(providers.items()):
        note = provider.start_note()
        if note is not None:
            print_wrapped(console, note, style="yellow")
