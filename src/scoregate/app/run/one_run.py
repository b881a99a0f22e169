"""Run (or resume) one experiment: plan, check the models, open the store, then execute.

The models' one-token check is sent only once every file check has passed (and a resumed run's lock is held),
so a rejected run spends no request; it runs in a thread while the imports of `scoregate.app.run.run_execution` go on.
The steps that follow a finished run (a judge's canary) are `scoregate.app.run.experiment`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scoregate.app.run.option_groups import PROMPT_SERVER
from scoregate.app.run.receipts import build_receipts, local_prompt_version
from scoregate.app.run.resumption import (
    check_resumable,
    finish_mirror,
    forget_mirrored,
    nothing_to_resume,
    resumed_options,
)
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.calls.caller import ModelCaller
from scoregate.catalog.plan import ExperimentPlan, models_used, plan_experiment
from scoregate.catalog.project import Project
from scoregate.catalog.routing import route_prompts
from scoregate.engine.preflight import BackgroundPreflight
from scoregate.errors import ScoregateError
from scoregate.providers.base import ProviderContext
from scoregate.store.lock import RunLock
from scoregate.store.records import CallRecord
from scoregate.store.run_store import RunStore, new_run_id, run_directory
from scoregate.support.redaction import redact, register_secret_env
from scoregate.support.start_gc import release_collector
from scoregate.support.terminal_text import print_wrapped

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.run.finished_run import PostRunStep
    from scoregate.store.record import Receipts

__all__ = ["run_one"]


def _open_or_create(
    project: Project,
    plan: ExperimentPlan,
    options: RunOptions,
    receipts: dict[str, Any],
    resumed: RunStore | None,
    checks: list[CallRecord],
) -> RunStore:
    """The run's store: a new one, or the resumed one (its lock held by the caller); each keeps the model
    checks' requests in its manifest (`model_checks`, a row each in the per-call telemetry)."""
    checked = [{**asdict(record), "error": redact(record.error) if record.error else None} for record in checks]
    if resumed is None:
        manifest = {
            "run_id": "",
            "status": "running",
            "started_at": datetime.now(UTC).isoformat(),
            "options": options.recorded(),
            "receipts": receipts,
            "pid": os.getpid(),
            "model_checks": checked,
        }
        if options.sharding.shard is not None:
            from scoregate.app.run.shards import create_shard_store

            return create_shard_store(project, options, manifest)
        run_id = options.selection.run_id or new_run_id(plan.name)
        manifest = {**manifest, "run_id": run_id}
        return RunStore.create(runs_dir(project), run_id, manifest)
    store = resumed
    store.repair()
    if options.resume.quarantine:
        store.quarantine()
    store.done_ids()  # a damaged line stops here, naming file:line, before the run is marked running
    changes: dict[str, Any] = {"status": "running", "resumed_at": datetime.now(UTC).isoformat()}
    stored = store.manifest_record
    changes["model_checks"] = list(stored.model_checks or []) + checked
    if stored.stop_early is not None:  # a stopped-early run goes on to the full dataset
        from scoregate.app.run.stop_early import continued_changes

        changes.update(continued_changes(stored))
    if options.resume.retry_errors:
        from scoregate.store.repeats import failed_records, repeat_key

        retried = failed_records(store)  # every repeat's: a failed repeat 2..K is retried too
        forget_mirrored(project, store, {repeat_key(item_id, repeat) for item_id, repeat in retried})
        changes["revision"] = (stored.revision or 0) + 1
    store.update_manifest(**changes, pid=os.getpid())
    return store


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
    resumed: RunStore | None = None
    lock: RunLock | None = None
    if options.sharding.shard is not None:  # a re-run of a shard's index resumes it
        from scoregate.app.run.shards import prepare_shard

        options, resumed = prepare_shard(project, experiment, options)
    elif options.resume.run_id is not None:
        resumed = RunStore.open(runs_dir(project), options.resume.run_id)
    elif options.selection.run_id is not None:
        _check_new_run_id(project, options.selection.run_id)
    if resumed is not None:
        lock = RunLock(resumed.directory)
        lock.acquire()
    try:
        if resumed is not None and options.sharding.shard is not None:
            release_collector()  # a finished shard only mirrors, a resumed run may only mirror: no start to speed
            from scoregate.app.run.shards import finish_shard, finished_shard_note

            if (reason := finished_shard_note(resumed, project, options)) is not None:  # its Langfuse items again
                outcome = finish_shard(resumed, project, options)
                outcome.nothing_to_do = reason
                return outcome
        elif resumed is not None:
            release_collector()
            if (reason := nothing_to_resume(resumed, options)) is not None:
                return finish_mirror(resumed, project, options, reason)
            experiment, options = resumed_options(resumed.manifest_record, options)
        outcome = _plan_check_and_run(project, experiment, options, resumed, lock, console, post_run)
    finally:
        if lock is not None:
            lock.release()
    return outcome


def _check_new_run_id(project: Project, run_id: str) -> None:
    """Refuse `--run-id` when it is not one file name or names a stored run (resuming that is `--resume`)."""
    directory = run_directory(runs_dir(project), run_id)
    if directory.exists():
        raise ScoregateError(
            f"run {run_id} already exists in {directory}; --run-id names a new run",
            hint=f"resume it with `scoregate run --resume {run_id}`, or give another --run-id",
        )


def _plan_check_and_run(
    project: Project,
    experiment: str,
    options: RunOptions,
    resumed: RunStore | None,
    lock: RunLock | None,
    console: Console | None,
    post_run: Sequence[PostRunStep],
) -> RunOutcome:
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import check_sinks_before_run

    check_sinks_before_run(SinkContext(project.root, loaded=project), skip=options.mirrors.off)  # before any model call
    prompt_versions = _use_langfuse_prompts(
        project, experiment, options, resumed=resumed.manifest_record.receipts if resumed is not None else None
    )
    plan = plan_experiment(
        project,
        experiment,
        model=options.models.model,
        judge_model=options.models.judge_model,
        model_from=options.models.model_from,
    )
    stop = None
    if (
        options.stop_early.on or options.stop_early.against is not None
    ):  # a bad stop-early request is refused before any call
        from scoregate.app.run.stop_early import plan_stop_early

        stop = plan_stop_early(project, plan, options)
    from scoregate.app.run.budget_gate import refuse_over_budget

    unchecked = refuse_over_budget(project, plan, options, resumed, console)  # before any request, the check's too

    from scoregate.calls.breaker import CircuitBreaker
    from scoregate.calls.cache import ResponseCache

    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if options.use_cache else None
    try:
        breaker = CircuitBreaker(project.config.settings.max_consecutive_failures)
        context = ProviderContext(project.root, project.config.settings)
        caller = ModelCaller(
            project.config.models, default_judge=plan.judge_model_name, cache=cache, breaker=breaker, context=context
        )
        prompt_versions = {
            name: prompt_versions.get(name) or local_prompt_version(spec) for name, spec in plan.prompts.items()
        }
        receipts = _receipts(project, plan, options, caller, prompt_versions) if resumed is not None else None
        if resumed is not None and receipts is not None:
            check_resumable(resumed, options, receipts)  # a refused resume spends no request either
        names = models_used(plan)
        check = BackgroundPreflight(
            project.config.models,
            names,
            default_judge=plan.judge_model_name,
            project_root=project.root,
            settings=project.config.settings,
        ).start()  # before the run directory exists: an unreachable URL leaves no run
        out = console or _stderr_console()  # the run's output starts once the check is out
        print_wrapped(out, _prompt_source_line(prompt_versions, options))
        if receipts is None:  # a new run's receipts are made while the check waits on the network
            receipts = _receipts(project, plan, options, caller, prompt_versions)
        _say_what_providers_note(names, caller, out)
        from scoregate.app.run.run_execution import execute_run

        release_collector()  # held since the command started (`scoregate.cli.main`): the start is over
        check.wait(every_s=options.heartbeat_s, beat=lambda waited, what: _say_check_waits(out, waited, what))
        if unchecked is not None:  # a time budget no past run could check: the check's reply sets a floor
            from scoregate.app.run.budget_gate import refuse_below_check_floor

            refuse_below_check_floor(project, unchecked, options, check.records, out)
        store = _open_or_create(project, plan, options, receipts, resumed, check.records)
    except BaseException:
        if cache is not None:
            cache.close()
        raise
    if lock is not None:
        return execute_run(store, plan, project, options, caller, prompt_versions, out, cache, stop, post_run)
    with RunLock(store.directory):
        return execute_run(store, plan, project, options, caller, prompt_versions, out, cache, stop, post_run)


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _say_check_waits(console: Console, waited: float, what: str) -> None:
    """The heartbeat of the models' check: which model it waits on, and for how long."""
    from scoregate.engine.progress import clock_text

    said = f"model check: waiting on {what} for {clock_text(waited)} (a one-token reply; a busy server answers late)"
    print_wrapped(console, said, first="  ", indent="    ")


def _say_what_providers_note(names: list[str], caller: ModelCaller, console: Console) -> None:
    """Print what the run's providers say at its start (the local model: whose shared server it queues on)."""
    providers = {caller.provider(name).endpoint: caller.provider(name) for name in names}
    for _endpoint, provider in sorted(providers.items()):
        note = provider.start_note()
        if note is not None:
            print_wrapped(console, note, style="yellow")


def _receipts(
    project: Project, plan: ExperimentPlan, options: RunOptions, caller: ModelCaller, prompt_versions: dict[str, str]
) -> dict[str, Any]:
    """What the run uses, hashed: a resume is refused when a part of it changed."""
    from scoregate.engine.repeats import repeats_receipt
    from scoregate.engine.stages import stages_receipt

    names = [plan.model_name, *models_used(plan)]
    endpoints = {name: caller.provider(name).endpoint for name in dict.fromkeys(names)}
    receipts = build_receipts(project, plan, prompt_versions=prompt_versions, endpoints=endpoints)
    receipts.update(repeats_receipt(options.selection.repeat, use_cache=options.use_cache))
    receipts.update(stages_receipt(plan, prompt_versions))
    return receipts


def _use_langfuse_prompts(
    project: Project, experiment: str, options: RunOptions, *, resumed: Receipts | None
) -> dict[str, str]:
    """With Langfuse as the prompt source, swap in the prompts Langfuse serves; never fall back silently.

    Returns prompt name → version for the receipts; empty when the local files are used.
    """
    from scoregate.integrations.langfuse.prompt_choice import choose_prompt_source

    asked = {"--prompt-label": options.prompts.label, "--prompt-version": options.prompts.version}
    given = next((f"{flag} {value}" for flag, value in asked.items() if value is not None), None)
    local_by = "--no-langfuse" if PROMPT_SERVER in options.mirrors.off else "--prompt-source local"
    spec = project.config.experiments.get(experiment)
    versions = {n: p.langfuse_version for n, p in (resumed.prompts if resumed else {}).items()}
    from_langfuse = choose_prompt_source(
        options.prompts.source, asked=given, resumed=any(versions.values()), local_by=local_by
    )
    if not from_langfuse or spec is None:
        return {}
    from scoregate.integrations.langfuse.prompt_source import resolve_prompts

    names = route_prompts(spec.prompt)
    if resumed is not None:
        if not any(versions.values()):
            return {}
        resolved = {}
        for name in names:
            resolved.update(resolve_prompts(project, [name], label=None, version=versions.get(name)))
    else:
        resolved = resolve_prompts(
            project, names, label=options.prompts.label, version=options.prompts.version, source=options.prompts.source
        )
    for name, found in resolved.items():
        project.prompts[name] = found.spec
    return {name: found.version for name, found in resolved.items()}


def _prompt_source_line(versions: dict[str, str], options: RunOptions) -> str:
    """Say where the run's prompts come from (the receipts record it per prompt as `source`)."""
    langfuse = {n: v for n, v in versions.items() if v.isdigit()}
    if langfuse:
        return "prompts: from Langfuse " + ", ".join(f"{n} v{v}" for n, v in langfuse.items())
    return f"prompts: local files (prompt source {options.prompts.source})"
