"""Mirror a stored run to Langfuse as one experiment, exactly once; the same path serves live runs and `langfuse-sync`.

The local run store is the system of record. The server's generation is read first (GET /api/public/health):
it decides how scores are sent and how SDK 5's spans are encoded. The stored results are fed through the SDK's
experiment runner (the only way a run shows on Langfuse's Experiments page): the task returns the stored output
and records one generation per stored model call with its model, parameters, usage, cost, latency and the
linked prompt version; scoregate posts the scores itself with fixed ids and the run's start time, so a re-post
replaces instead of adding. Run aggregates and gate verdicts become run-level scores. What the server
confirmed is recorded in `runs/<id>/langfuse.json`; a later sync sends only the rest.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import SDK_MAJOR, LangfuseSettings, SdkLogCapture, require_settings
from scoregate.integrations.langfuse.delivery import MirrorClient, trace_id_for
from scoregate.integrations.langfuse.mirror_state import (
    ItemMirror,
    MirrorState,
    experiment_id_for,
    score_timestamp,
    trace_seed,
)
from scoregate.integrations.langfuse.server_generation import ServerGeneration, read_generation
from scoregate.sinks.contract import RunRecord
from scoregate.sinks.langfuse.context import MirrorContext, mirror_key
from scoregate.sinks.langfuse.generations import record_generations
from scoregate.sinks.langfuse.items import experiment_metadata, item_data, link_dataset
from scoregate.sinks.langfuse.report import MirrorReport, judge
from scoregate.sinks.langfuse.run_items import DatasetRun
from scoregate.sinks.langfuse.score_mapping import digest, run_scores
from scoregate.sinks.langfuse.score_posts import post_item, post_run_scores
from scoregate.sinks.langfuse.sdk4_runner import sdk4_runner
from scoregate.sinks.langfuse.trace_attributes import ATTRIBUTE_LIMIT, trace_attributes, traced_with
from scoregate.store.description import RunDescription
from scoregate.store.identity import manifest_run_name
from scoregate.store.invalidation import invalidated
from scoregate.store.records import ItemResult
from scoregate.store.repeats import iter_all_results
from scoregate.store.run_store import RunStore

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary

CHUNK = 500  # items per runner call (SDK 5, which keeps one experiment id across calls): bounds memory


def mirror_run_to_langfuse(store: RunStore, project: Project, *, record: RunRecord | None = None) -> MirrorReport:
    """Mirror a finished run to Langfuse as one experiment; send only what the server has not confirmed yet.
    `record`: the run's manifest and summary when the caller read them already (else they are read here, once)."""
    settings = require_settings()
    record = record or RunRecord.read(store)
    manifest, summary = record.manifest, record.summary
    run_level = manifest.shard is None  # a shard of a sharded run sends its items; `merge` the run's scores
    if run_level and summary is None:
        raise ScoregateError(
            f"run {store.run_id} has no summary: it did not finish",
            hint=f"resume it (`scoregate run --resume {store.run_id}`), then sync it",
        )
    state = MirrorState.load(store, settings.host)
    report = MirrorReport(run_id=store.run_id, host=settings.host)
    generation = _generation(settings, store, report)
    if generation is None:  # unreachable: nothing was sent
        store.set_link("langfuse_synced", False)
        return report
    with SdkLogCapture() as capture:
        session = MirrorClient(settings, generation)
        try:
            run = (manifest, invalidated(store, summary) if run_level and summary is not None else None)
            ctx = _prepare(session, store, run, state, report, project)
            if ctx is not None:
                _send(session, ctx, report, run_level=run_level)
        finally:
            session.close()
    report.warnings += list(dict.fromkeys(capture.messages))
    if ctx is None:  # unreachable or refused: nothing was sent
        store.set_link("langfuse_synced", False)
        return report
    _confirm(session, ctx, report)
    _notes(session, ctx, report)
    state.save(store)
    judge(report, state, session.ledger, run_level=run_level)
    store.set_link("langfuse_experiment_id", state.experiment_id)
    store.set_link("langfuse_experiment_url", state.experiment_url)
    store.set_link("langfuse_synced", report.complete)
    store.set_link("langfuse_synced_at", datetime.now(UTC).isoformat())
    return report


def _notes(session: MirrorClient, ctx: MirrorContext, report: MirrorReport) -> None:
    """What the report says besides the counts: how scores went, the dataset run, metadata left out."""
    report.switched, report.scores_form = session.scores.switched, session.scores.form
    if ctx.dataset_run is not None:
        posted = ctx.dataset_run.posted
        report.notes.append(f"dataset run: {posted} run item(s) posted by scoregate (SDK 5 on a server before v4.59)")
        report.warnings += [f"dataset run item not posted: {e}" for e in ctx.dataset_run.errors]
    if ctx.dropped:
        more = ctx.dropped - len(ctx.dropped_metadata)
        shown = ", ".join(ctx.dropped_metadata) + (f" and {more} more" if more > 0 else "")
        report.notes.append(
            f"metadata: values over {ATTRIBUTE_LIMIT} characters are not in the traces (the SDK's attribute limit): "
            f"{shown}; the full values are in runs/{ctx.store.run_id}/results.jsonl and the Langfuse dataset items"
        )


def _generation(settings: LangfuseSettings, store: RunStore, report: MirrorReport) -> ServerGeneration | None:
    """The server's generation (raise ServerTooOld for one scoregate cannot write to); None when nothing answers."""
    try:
        generation = read_generation(settings)
    except httpx.HTTPError as exc:
        report.problems.append(f"Langfuse at {report.host} is unreachable ({type(exc).__name__}: {exc}); nothing sent")
        report.hint = f"the run is kept locally; when Langfuse is back: `scoregate langfuse-sync {store.run_id}`"
        return None
    report.server = generation
    return generation


def _prepare(
    session: MirrorClient,
    store: RunStore,
    run: tuple[Manifest, RunSummary | None],
    state: MirrorState,
    report: MirrorReport,
    project: Project,
) -> MirrorContext | None:
    """Reach the server, fix the experiment id and fetch the prompts to link; None when the server is out of reach."""
    lf = session.langfuse
    try:
        projects = lf.api.projects.get(request_options={"max_retries": 1})
    except httpx.TransportError as exc:
        report.problems.append(f"Langfuse at {report.host} is unreachable ({type(exc).__name__}: {exc}); nothing sent")
        report.hint = f"the run is kept locally; when Langfuse is back: `scoregate langfuse-sync {store.run_id}`"
        return None
    except Exception as exc:  # the API client raises its own error types per status
        status = getattr(exc, "status_code", None)
        report.problems.append(f"Langfuse at {report.host} refused the request (HTTP {status}: {exc}); nothing sent")
        if status in (401, 403):  # refused, not out of reach: sending again will not help until the keys change
            report.refused = True
            report.hint = "check LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST"
        return None
    project_id = projects.data[0].id if projects.data else None
    _check_record(session, state, project_id, report)
    if state.experiment_id is None:
        state.experiment_id = experiment_id_for(store.run_id) if SDK_MAJOR >= 5 else None
    manifest, summary = run
    ctx = MirrorContext(store, manifest, summary, state, project_id, score_timestamp(manifest), project)
    _load_score_configs(session, ctx, report, first=state.confirmed_trace() is None)
    for name, info in manifest.receipts.prompts.items():
        version = str(info.version)
        if version.isdigit():
            try:
                ctx.prompts[name] = lf.get_prompt(name, version=int(version), cache_ttl_seconds=0, max_retries=0)
            except Exception as exc:
                report.warnings.append(f"prompt {name}@{version} not found in Langfuse ({exc}); not linked")
    return ctx


def _trace_lost(session: MirrorClient, trace_id: str) -> bool:
    """True when the server answers that it has no observation of this trace (any doubt: False)."""
    settings = session.settings
    try:
        answer = httpx.get(
            f"{settings.host}/api/public/v2/observations",
            params={"traceId": trace_id, "limit": 1},
            auth=(settings.public_key, settings.secret_key),
            timeout=10,
        )
        return answer.status_code == 200 and answer.json().get("data") == []
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def _load_score_configs(session: MirrorClient, ctx: MirrorContext, report: MirrorReport, *, first: bool) -> None:
    """Set up the score configs before a run's first mirror, then read them; a server without them is noted."""
    from scoregate.integrations.langfuse.public_api import MissingApi, PublicApi
    from scoregate.integrations.langfuse.score_configs import server_configs, setup_score_configs

    api = PublicApi(session.settings)
    try:
        if first and ctx.project is not None:
            setup_score_configs(ctx.project, api=api)
        ctx.configs = {k: v for k, v in server_configs(api).items() if not v.get("isArchived")}
    except MissingApi as exc:
        report.notes.append(f"score configs: {exc.message}; scores are posted without config ids")
    except ScoregateError as exc:
        report.warnings.append(f"score configs not set up: {exc.message}")
    finally:
        api.close()


def _check_record(session: MirrorClient, state: MirrorState, project_id: str | None, report: MirrorReport) -> None:
    """Start over when the record is about another project, or the server lost the run (a reset server)."""
    if not state.belongs_to(project_id):
        report.warnings.append(
            f"the mirror record was about project {state.project_id}; {report.host} now serves project "
            f"{project_id}: mirroring the run there in full"
        )
        state.forget(project_id)
    trace = state.confirmed_trace()
    if trace is not None and _trace_lost(session, trace):
        report.warnings.append(
            f"Langfuse at {report.host} no longer has this run's traces (a reset server?): "
            "mirroring the run again in full, under the same ids"
        )
        state.forget(project_id)
    state.project_id = project_id


def _chunks(results: Iterator[ItemResult]) -> Iterator[list[ItemResult]]:
    """Runner-sized batches; SDK 4 cannot reuse an experiment id, so there everything goes in one call."""
    size = CHUNK if SDK_MAJOR >= 5 else None
    while chunk := list(islice(results, size)):
        yield chunk


def _send(session: MirrorClient, ctx: MirrorContext, report: MirrorReport, *, run_level: bool = True) -> None:
    """Send the traces and scores the server has not confirmed, then the run-level scores."""
    lf, state = session.langfuse, ctx.state
    if any(not state.is_done(mirror_key(r)) for r in iter_all_results(ctx.store)):
        link_dataset(lf, ctx, report)
        ctx.dataset_run = _dataset_run(session, ctx)
    for result in iter_all_results(ctx.store):  # every repeat of `run --repeat K` is its own trace
        report.items_total += 1
        known = state.items.get(mirror_key(result))
        if known is not None and known.trace and not known.scores:
            ctx.batch.placed[mirror_key(result)] = known
            post_item(session, ctx, result, known)
    pending = (r for r in iter_all_results(ctx.store) if not state.traced(mirror_key(r)))
    for chunk in _chunks(pending):
        _run_chunk(session, ctx, chunk)
        report.items_sent += len(chunk)
        if SDK_MAJOR >= 5:  # its runner flushed: every answer about the chunk is in; record it, forget its ids
            ctx.batch.confirm(session, state, report, lambda: _run_scores_digest(ctx))
            state.save(ctx.store)
            gc.collect()  # the chunk's spans and SDK objects are cyclic garbage: freed now, not as the heap grows
    if not state.experiment_id or not run_level or ctx.summary is None:
        return
    posts = run_scores(ctx.summary, ctx.store.links.get("mlflow_run_id"))
    if state.run_scores_digest != digest(posts, state.experiment_id):
        post_run_scores(session, ctx, state.experiment_id)


def _dataset_run(session: MirrorClient, ctx: MirrorContext) -> DatasetRun | None:
    """The dataset run scoregate keeps itself: SDK 5 (whose runner posts no run items) on a server older than
    v4.59 (which lists a run under its dataset only from them), when the run is linked to its dataset."""
    if ctx.dataset_id is None or SDK_MAJOR < 5 or not session.generation.older:
        return None
    return DatasetRun(
        session.settings, session.http, dataset_id=ctx.dataset_id, run_name=_run_name(ctx),
        description=RunDescription(ctx.manifest).paragraph(),
        metadata=experiment_metadata(ctx.manifest, ctx.store.links),
    )  # fmt: skip


def _run_name(ctx: MirrorContext) -> str:
    """The name the run has in Langfuse: its id and what it ran (fixed for the life of the run)."""
    return f"{ctx.store.run_id} · {manifest_run_name(ctx.manifest)}"


def _run_chunk(session: MirrorClient, ctx: MirrorContext, chunk: list[ItemResult]) -> None:
    """Feed stored results through the SDK's experiment runner, one item at a time (so trace ids are fixed)."""
    lf, run_id = session.langfuse, ctx.store.run_id
    by_id = {mirror_key(r): r for r in chunk}
    session.ids.plan([trace_seed(run_id, mirror_key(r)) for r in chunk])
    data: list[Any] = [item_data(ctx, r) for r in chunk]

    async def task(*, item: Any, **_: Any) -> Any:
        metadata = item["metadata"] if isinstance(item, dict) else item.metadata
        result = by_id[metadata.get("mirror_key", metadata["item_id"])]
        trace_id = lf.get_current_trace_id() or ""
        ctx.unordered |= trace_id != trace_id_for(trace_seed(run_id, mirror_key(result)))
        placed = ItemMirror(trace_id=trace_id, observation_id=lf.get_current_observation_id())
        ctx.batch.placed[mirror_key(result)] = placed
        attributes = trace_attributes(ctx.project, ctx.manifest, run_id, result)
        with traced_with(session.roots.get(trace_id), attributes):
            record_generations(lf, session, ctx, result, trace_id)
        post_item(session, ctx, result, placed)
        return result.output if result.error is None else f"[error] {result.error}"

    receipts = ctx.manifest.receipts
    extra: dict[str, Any] = {"experiment_id": ctx.state.experiment_id} if SDK_MAJOR >= 5 else {}
    run_name = _run_name(ctx)
    with sdk4_runner(lf, run_id, ctx.dataset_id, run_name):
        outcome = lf.run_experiment(
            name=f"{receipts.project}/{receipts.experiment}",
            run_name=run_name,
            description=RunDescription(ctx.manifest).paragraph(),
            data=data,
            task=task,
            max_concurrency=1,
            metadata=experiment_metadata(ctx.manifest, ctx.store.links),
            **extra,
        )
    if ctx.state.experiment_id is None:
        ctx.state.experiment_id = outcome.experiment_id
    elif outcome.experiment_id != ctx.state.experiment_id:  # SDK 4 linked: the server's dataset run id
        ctx.state.other_experiment_ids.append(outcome.experiment_id)


def _run_scores_digest(ctx: MirrorContext) -> str:
    """The digest of the run-level scores as posted now (recorded once the server accepted every one)."""
    if ctx.summary is None:  # a shard: its run-level scores are the merged run's
        return ""
    return digest(run_scores(ctx.summary, ctx.store.links.get("mlflow_run_id")), str(ctx.state.experiment_id))


def _confirm(session: MirrorClient, ctx: MirrorContext, report: MirrorReport) -> None:
    """After the last flush: record what is left to confirm, and the totals."""
    state = ctx.state
    ctx.batch.confirm(session, state, report, lambda: _run_scores_digest(ctx))
    report.items_confirmed = state.counts()[1]
    if ctx.unordered:
        report.warnings.append("the SDK runner did not start items in order: trace ids are not the derived ones")
    if state.experiment_id and ctx.project_id:
        state.experiment_url = (
            f"{report.host}/project/{ctx.project_id}/experiments/results?baseline={quote(state.experiment_id, safe='')}"
        )
    report.experiment_id, report.experiment_url = state.experiment_id, state.experiment_url
