"""`scoregate scores import`: human ratings and online feedback posted as Langfuse scores, and kept locally.

The local copy (`feedback/scores.jsonl`, append-only, one line per new or changed score) is what judge
calibration reads. Score ids are derived from target, key and rater, and the first import's timestamp is
reused on every later import: Langfuse replaces a score only when id, name and day match, so importing a
file again updates scores in place and never duplicates them; a score the server confirmed as it is now
is not posted again (`posted_scores`), so an unchanged file writes nothing. Each score carries the id of
its key's score config (created when Langfuse lacks it), so Langfuse validates it and shows its scale.
Scores are posted by scoregate in the form the server's generation takes (`score_sender`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from scoregate.errors import MirrorRefused, ScoregateError, ValidationFailed
from scoregate.integrations.langfuse.client import require_settings
from scoregate.integrations.langfuse.mirror_state import STATE_FILE, confirmed_traces
from scoregate.integrations.langfuse.posted_scores import PostedScores
from scoregate.integrations.langfuse.remote import HOST_HINT, Remote
from scoregate.integrations.langfuse.score_sender import ScoreSender, ScoreWrite
from scoregate.integrations.langfuse.scores_file import SCORE_KEYS, FeedbackScore, read_feedback
from scoregate.integrations.langfuse.server_generation import read_generation
from scoregate.store.feedback import FEEDBACK_FILE, TRACE_LINKS_KEY, feedback_path, load_feedback

_CONTENT_KEYS = ("key", "value", "data_type", "comment", "rater", "trace_id", "observation_id", "run_id", "item_id")

TraceLookup = Callable[[str, str], str | None]
__all__ = ["FEEDBACK_FILE", "TRACE_LINKS_KEY", "feedback_path", "import_scores", "load_feedback"]


def run_store_traces(root: Path) -> TraceLookup:
    """Return a lookup (run id, item id) → Langfuse trace id that reads runs/<run_id>/links.json."""
    from scoregate.store.run_store import run_directory

    cache: dict[str, tuple[Callable[[str], str | None], dict[str, str]]] = {}

    def lookup(run_id: str, item_id: str) -> str | None:
        if run_id not in cache:
            run_dir = run_directory(root / "runs", run_id)
            links_path = run_dir / "links.json"
            links = json.loads(links_path.read_text(encoding="utf-8")) if links_path.is_file() else {}
            # the Langfuse mirror's record (runs/<id>/langfuse.json) knows each item's confirmed trace
            cache[run_id] = (confirmed_traces(run_dir), links.get(TRACE_LINKS_KEY) or {})
        mirrored, linked = cache[run_id]
        return mirrored(item_id) or linked.get(item_id)

    return lookup


@dataclass
class ImportReport:
    """What `scores import` did."""

    file: Path
    local_path: Path
    rows: int
    keys: dict[str, int]
    local_new: int = 0
    local_unchanged: int = 0
    posted: int = 0
    """Scores posted to Langfuse now (new, or changed since the server confirmed them)."""
    already: int = 0
    """Scores the server confirmed before exactly as they are now: not posted again."""
    host: str | None = None
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)


def _record(score: FeedbackScore, trace_id: str | None, timestamp: dt.datetime, now: dt.datetime) -> dict[str, Any]:
    return {
        "score_id": score.score_id,
        "key": score.key,
        "value": score.value,
        "data_type": score.data_type,
        "comment": score.comment,
        "rater": score.rater,
        "trace_id": trace_id,
        "observation_id": score.observation_id,
        "run_id": score.run_id,
        "item_id": score.item_id,
        "timestamp": timestamp.isoformat(),
        "source": score.source,
        "imported_at": now.isoformat(),
    }


def _resolve_traces(scores: Sequence[FeedbackScore], lookup: TraceLookup) -> dict[str, str | None]:
    """Return each score's trace id; raise ValidationFailed naming rows whose item has no known trace."""
    traces: dict[str, str | None] = {}
    problems = []
    for score in scores:
        trace = score.trace_id
        if trace is None and score.run_id and score.item_id:
            trace = lookup(score.run_id, score.item_id)
            if trace is None:
                problems.append(
                    f"{score.source}: item {score.item_id!r} of run {score.run_id!r} has no Langfuse trace "
                    f"(runs/{score.run_id}/{STATE_FILE} records no confirmed trace for it)"
                )
        traces[score.score_id] = trace
    if problems:
        raise ValidationFailed(
            problems, hint="mirror the run to Langfuse first, give trace_id, or import with --local-only"
        )
    return traces


def check_run_references(root: Path, scores: Sequence[FeedbackScore]) -> None:
    """Raise ValidationFailed naming every row that rates a run, or an item of a run, that the store does not have."""
    from scoregate.store.run_lookup import closest
    from scoregate.store.run_store import RUN_ID, RunStore, list_runs

    stored: list[str] = []  # the store's run ids, read once at the first unknown one
    items: dict[str, set[str] | None] = {}
    problems = []
    for score in scores:
        if not score.run_id:
            continue
        if score.run_id not in items:
            directory = root / "runs" / score.run_id
            found = RUN_ID.fullmatch(score.run_id) and (directory / "manifest.json").is_file()
            items[score.run_id] = RunStore(directory).done_ids() if found else None
        known = items[score.run_id]
        if known is None:
            stored = stored or [s.run_id for s in list_runs(root / "runs")]
            problems.append(
                f"{score.source}: run_id: no run {score.run_id!r} in {root / 'runs'}{closest(score.run_id, stored)}"
            )
        elif score.item_id and score.item_id not in known:
            problems.append(f"{score.source}: item_id: run {score.run_id!r} has no item {score.item_id!r}")
    if problems:
        raise ValidationFailed(problems, hint="fix run_id / item_id (see `scoregate runs list`); nothing was imported")


def _ends_a_line(path: Path) -> bool:
    """True when the file is missing, empty, or ends with a newline (so an appended record starts a line)."""
    if not path.is_file() or path.stat().st_size == 0:
        return True
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _keep_locally(
    root: Path, scores: Sequence[FeedbackScore], traces: dict[str, str | None], now: dt.datetime
) -> tuple[dict[str, dict[str, Any]], int]:
    """Append new or changed scores to the local store; return every score's record and how many were appended.

    A score imported before keeps its first timestamp, so that Langfuse replaces it instead of adding one.
    """
    known = load_feedback(root)
    records: dict[str, dict[str, Any]] = {}
    fresh: list[str] = []
    for score in scores:
        before = known.get(score.score_id)
        timestamp = score.timestamp or (dt.datetime.fromisoformat(before["timestamp"]) if before else now)
        trace = traces.get(score.score_id, score.trace_id) or (before or {}).get("trace_id")
        record = _record(score, trace, timestamp, now)
        records[score.score_id] = record
        if before is None or any(before.get(k) != record[k] for k in (*_CONTENT_KEYS, "timestamp")):
            fresh.append(json.dumps(record, ensure_ascii=False))
    if fresh:
        path = feedback_path(root)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            separator = "" if _ends_a_line(path) else "\n"  # a hand-edited file may lack its last newline
            with path.open("a", encoding="utf-8") as handle:
                handle.write(separator + "\n".join(fresh) + "\n")
        except OSError as exc:
            raise ScoregateError(
                f"cannot write the feedback store: {exc.strerror}",
                where=str(path),
                hint="make feedback/scores.jsonl a writable file; nothing was imported",
            ) from None
    return records, len(fresh)


def _score_configs(remote: Remote, scores: Sequence[FeedbackScore], report: ImportReport) -> dict[str, dict[str, Any]]:
    """The server's configs of the imported keys by name (the missing ones created); none when it has no such API."""
    from scoregate.integrations.langfuse.public_api import MissingApi, PublicApi
    from scoregate.integrations.langfuse.score_configs import ensure_configs, feedback_configs

    used = {score.key for score in scores}
    api = PublicApi(remote.settings)
    try:
        return ensure_configs(api, feedback_configs({k: r for k, r in SCORE_KEYS.items() if k in used}))
    except MissingApi as exc:
        report.notes.append(f"score configs: {exc.message}; the scores are posted without config ids")
        return {}
    finally:
        api.close()


def _writes(
    scores: Sequence[FeedbackScore], records: dict[str, dict[str, Any]], configs: dict[str, dict[str, Any]]
) -> list[ScoreWrite]:
    """Each score as it is posted: its local record's trace and first time, and its config id when it fits."""
    from scoregate.integrations.langfuse.score_configs import fits

    writes = []
    for score in scores:
        record = records[score.score_id]
        metadata = {k: record[k] for k in ("rater", "run_id", "item_id") if record[k] is not None}
        config = configs.get(score.key)
        writes.append(
            ScoreWrite(
                id=score.score_id,
                name=score.key,
                value=score.value,
                timestamp=dt.datetime.fromisoformat(record["timestamp"]),
                data_type=score.data_type,
                comment=score.comment,
                metadata={**metadata, "source": "scoregate scores import"},
                trace_id=record["trace_id"],
                observation_id=score.observation_id,
                config_id=str(config["id"]) if config and fits(config, score.value, score.data_type) else None,
            )
        )
    return writes


def _post(root: Path, remote: Remote, project_id: str, writes: list[ScoreWrite], report: ImportReport) -> None:
    """Post the scores the server has not confirmed as they are now; raise when it did not take every one."""
    settings = remote.settings
    posted = PostedScores.load(root, settings.host, project_id)
    fresh = [w for w in writes if not posted.is_confirmed(w)]
    report.already = len(writes) - len(fresh)
    if not fresh:
        return
    try:
        sender = ScoreSender(settings, read_generation(settings))
    except httpx.HTTPError as exc:
        raise ScoregateError(
            f"cannot reach Langfuse at {settings.host}: {exc or type(exc).__name__}",
            hint=f"the ratings are kept locally; import the file again when it answers. {HOST_HINT}",
        ) from None
    try:
        sender.send_all(fresh)
    finally:
        sender.close()
    ledger = sender.ledger
    for write in fresh:
        if ledger.is_accepted(write.id):
            posted.record(write)
    posted.save()
    report.posted = len(fresh)
    accepted, rejected = ledger.counts([w.id for w in fresh])
    if accepted == len(fresh):
        return
    errors = "\n".join(f"  - {e}" for e in ledger.server_errors[:5])
    if rejected:
        raise MirrorRefused(
            f"Langfuse refused {rejected} of {len(fresh)} scores:\n{errors}",
            hint="the ratings are kept locally; fix what the server names, then import the file again "
            "(nothing duplicates)",
        )
    raise ScoregateError(
        f"Langfuse did not confirm {len(fresh) - accepted} of {len(fresh)} scores:\n{errors}",
        hint="the ratings are kept locally; import the file again to retry (nothing duplicates)",
    )


def import_scores(
    root: Path,
    path: Path,
    *,
    local_only: bool = False,
    dry_run: bool = False,
    remote: Remote | None = None,
    trace_lookup: TraceLookup | None = None,
    now: dt.datetime | None = None,
) -> ImportReport:
    """Validate a feedback file, keep it in feedback/scores.jsonl and post it as Langfuse scores; return the report.

    Every row is validated (and, when posting, its trace resolved) before anything is written. `local_only`
    skips Langfuse; `dry_run` only validates.
    """
    scores = read_feedback(path)
    if local_only:  # posting checks each row's run and item when it looks up the trace
        check_run_references(root, scores)
    keys = dict(Counter(score.key for score in scores))
    report = ImportReport(file=path, local_path=feedback_path(root), rows=len(scores), keys=keys, dry_run=dry_run)
    posting = not (local_only or dry_run)
    if posting and remote is None:
        try:
            remote = Remote(require_settings())
        except ScoregateError as exc:
            raise ScoregateError(
                exc.message, hint="export the variables, or pass --local-only to keep them locally"
            ) from None
    traces = _resolve_traces(scores, trace_lookup or run_store_traces(root)) if posting else {}
    if dry_run:
        return report
    configs: dict[str, dict[str, Any]] = {}
    project_id = ""
    if posting:
        assert remote is not None
        report.host = remote.settings.host
        project_id = remote.project().id
        configs = _score_configs(remote, scores, report)
    records, report.local_new = _keep_locally(root, scores, traces, now or dt.datetime.now(dt.UTC))
    report.local_unchanged = len(scores) - report.local_new
    if posting:
        assert remote is not None
        _post(root, remote, project_id, _writes(scores, records, configs), report)
    return report
