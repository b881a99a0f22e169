"""Resuming a stored run: what it would do (nothing, when it finished), the options it keeps, whether the project
still matches it, and telling the mirrors which records a `--retry-errors` resume replaces."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scoregate.app.run.option_groups import PROMPT_SERVER
from scoregate.app.run.receipts import resume_conflicts
from scoregate.app.run.run_options import RunOptions, RunOutcome
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.store.record import Manifest


def forget_mirrored(project: Project, store: RunStore, item_ids: set[str]) -> None:
    """Tell every sink these items' records are about to change, so its next mirror sends the newer ones. A sink
    that cannot forget stops the resume before an item runs: its mirror would keep the old records silently."""
    if not item_ids:
        return
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import Forget, mirror_all

    forgot = mirror_all(Forget(store, frozenset(item_ids)), SinkContext(project.root, loaded=project))
    for name, trouble in forgot.troubles().items():
        raise ScoregateError(
            f"run {store.run_id}: the {name} mirror cannot mark the retried items to be sent again: {trouble}",
            hint=f"fix the cause, then resume again: `scoregate run --resume {store.run_id} --retry-errors`",
        )


def check_resumable(store: RunStore, options: RunOptions, receipts: dict[str, Any]) -> None:
    from scoregate.store.record import Receipts

    conflicts = resume_conflicts(store.manifest_record.receipts, Receipts.model_validate(receipts))
    if conflicts:
        raise ScoregateError(
            f"cannot resume {options.resume.run_id or store.directory}: {'; '.join(conflicts)} since the run started",
            hint="resuming would mix two setups in one run; undo the change, or start a new run instead",
        )


def finish_mirror(store: RunStore, project: Project, options: RunOptions, reason: str) -> RunOutcome:
    """A finished run has nothing to run; complete the mirrors a kill cut short (on the sinks that can tell, and
    that the run was not started without), else do nothing."""
    outcome = RunOutcome(run_id=store.run_id, store=store, summary=store.summary or {}, nothing_to_do=reason)
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import FinishMirror, mirror_all

    context = SinkContext(project.root, loaded=project)  # the caller holds the run's lock
    skip = kept_outputs(store.manifest_record, options).mirrors.off
    mirrored = mirror_all(FinishMirror(store), context, skip=skip)  # a failure is reported; `sync` redoes it
    outcome.mirrors.update(mirrored.links())
    outcome.mirror_errors.update(mirrored.troubles())
    done = [
        f"completed its {result.title or name} mirror"
        if name in outcome.mirrors
        else f"its {result.title or name} mirror failed again"
        for name, result in mirrored.results.items()
    ]
    if done:
        outcome.nothing_to_do = f"{reason}\n{'; '.join(done)} (it had not finished)"
    return outcome


def nothing_to_resume(store: RunStore, options: RunOptions) -> str | None:
    """Say why resuming this run would do nothing (finished, and no failed item asked for), else None."""
    if options.resume.quarantine:
        return None
    summary = store.summary_record
    if store.manifest_record.status != "finished" or summary is None:
        return None
    if store.needs_repair() or len(store.done_ids()) < int(summary.run_metrics.value("items") or 0):
        return None  # damaged after it finished: resuming redoes what was lost
    run_id = store.run_id
    if not options.resume.retry_errors:
        return (
            f"run {run_id} already finished; nothing to resume. To mirror it again: "
            f"`scoregate mlflow-sync {run_id}` (or `scoregate langfuse-sync {run_id}`); "
            f"to redo its failed items: `scoregate run --resume {run_id} --retry-errors`"
        )
    from scoregate.store.repeats import failed_records

    if not failed_records(store):
        return f"run {run_id} already finished and no item failed; nothing to retry"
    return None


def kept_outputs(manifest: Manifest, options: RunOptions) -> RunOptions:
    """`options` with what the run recorded of its mirrors, report and evaluation rows: a mirror it was started
    without stays off (a flag on the resume can turn one off too), and so does its report; evaluation rows it
    asked for are written. A run from before these were recorded keeps the resume's own flags."""
    saved, mirrors, prompts = manifest.options, options.mirrors, options.prompts
    off = mirrors.off | _registered(saved.mirrors_off or ())
    server_off = PROMPT_SERVER in off - mirrors.off  # started without it, as `--no-langfuse` does: its prompts too
    return replace(
        options,
        prompts=replace(prompts, source="local") if server_off and prompts.source == "auto" else prompts,
        mirrors=replace(
            mirrors,
            off=off,
            report=mirrors.report and saved.report is not False,
            eval_rows=mirrors.eval_rows or bool(saved.eval_rows),
        ),
    )


def _registered(names: Iterable[str]) -> frozenset[str]:
    """Those of `names` that are registered sinks (a plug-in's package may be gone since the run started)."""
    names = frozenset(names)
    if not names:
        return names
    from scoregate.sinks.registry import sink_names

    return names & frozenset(sink_names())


def resumed_options(manifest: Manifest, options: RunOptions) -> tuple[str, RunOptions]:
    """The experiment and options of the run being resumed: every option it recorded (a new --concurrency is kept;
    `--no-cache`, `--no-mlflow`, `--no-langfuse` and `--no-report` on the resume of a run without them also hold)."""
    receipts, saved = manifest.receipts, manifest.options
    kept = kept_outputs(manifest, options)
    return str(receipts.experiment), replace(
        kept,
        selection=replace(kept.selection, limit=saved.limit, repeat=saved.repeat),
        concurrency=options.concurrency or saved.concurrency,
        use_cache=options.use_cache and saved.cache is not False,
        models=replace(
            kept.models,
            model=str(receipts.model.name if receipts.model else None),
            judge_model=receipts.judge_model.name if receipts.judge_model else None,
        ),
    )
