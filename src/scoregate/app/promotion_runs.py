"""The runs that may be a prompt version's promotion evidence, newest first, each read into the same facts.

The local run store is the system of record: its runs of the experiment that used the version are read from their
manifest and summary, mirrored to MLflow or not. MLflow adds the runs made elsewhere (a CI job mirroring to a shared
server) that the local store does not hold. A run in both is read from the store and keeps its MLflow id, so a
promotion tags it there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scoregate.sinks.mlflow.experiments import find_experiment
from scoregate.sinks.mlflow.run_mirror import QUARANTINE_KEYS, RUN_ID_TAG
from scoregate.store.invalidation import REASON_TAG, SUPERSEDED_TAG, invalidation_of
from scoregate.store.run_store import DamagedRun, RunStore, list_runs
from scoregate.store.stop_record import STOPPED_EARLY
from scoregate.store.valid_runs import invalid_reason

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary

MAX_RUNS = 200
"""The most MLflow runs of one version read per experiment (newest first)."""

Cause = Literal["invalidated", "unfinished", "stopped_early", "limit", "no_model", "model", "gates", "damaged"]
"""Why a run is no evidence, as far as the fix goes: each cause has its own (`promotion_evidence.fix_for`)."""


@dataclass(frozen=True)
class Flaw:
    """Why a run is no evidence: the `cause` (which decides the fix) and the words (`ran only 3 items (--limit)`)."""

    cause: Cause
    text: str


@dataclass(frozen=True)
class CandidateRun:
    """One run of the version, from the local store or from MLflow, with what the evidence rules look at."""

    run_id: str | None
    """The scoregate run id (`None` for an MLflow run that does not record one)."""
    mlflow_run_id: str | None
    started: float
    """Start time, seconds since the epoch (newest first across both sources)."""
    local: bool
    flaw: Flaw | None = None
    """Why it cannot count whatever the experiment (invalidated, unfinished, stopped early, --limit, damaged)."""
    model: str | None = None
    gates_hash: str | None = None
    verdict: str | None = None
    gates: dict[str, str] = field(default_factory=dict)
    """Each gate's verdict in words (`pass`, `pass on 5 of 6, 1 quarantined`, `fail`)."""
    quarantine: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per gate passed with flaky items kept out: `kept_out`, `breaking`, `gated`, `total`."""


def local_runs(runs_dir: Path, experiment: str, prompt: str, version: int | str) -> list[CandidateRun]:
    """The stored runs of `experiment` whose receipts name `version` of `prompt`, newest first.

    A run whose manifest cannot be read is left out: nothing says which experiment or version it ran.
    """
    found = []
    for store in list_runs(runs_dir):
        try:
            receipts = store.manifest_record.receipts
        except DamagedRun:
            continue
        used = receipts.prompts.get(prompt)
        if receipts.experiment == experiment and used is not None and str(used.version) == str(version):
            found.append(_local_run(store))
    return found


def _local_run(store: RunStore) -> CandidateRun:
    manifest = store.manifest_record
    receipts = manifest.receipts
    run = CandidateRun(
        store.run_id, None, _seconds(manifest.started_at), True,
        model=receipts.model.name if receipts.model else None, gates_hash=receipts.gates_hash,
    )  # fmt: skip
    try:
        summary = store.summary_record
        flaw = _local_flaw(store, manifest, summary)
    except DamagedRun as exc:  # summary.json or invalidation.json
        return replace(run, flaw=Flaw("damaged", f"has a damaged record ({exc.message})"))
    if summary is None:
        return replace(run, flaw=flaw or Flaw("unfinished", "has no summary"))
    quarantine = {
        g.name: dict(zip(QUARANTINE_KEYS, [len(g.quarantined), len(g.quarantined_breaking or []),
                                           g.gated_items or 0, g.total_items or 0], strict=True))
        for g in summary.gates if g.quarantined
    }  # fmt: skip
    gates = {g.name: g.verdict_words() for g in summary.gates}
    return replace(run, flaw=flaw, verdict=summary.verdict, gates=gates, quarantine=quarantine)


def _local_flaw(store: RunStore, manifest: Manifest, summary: RunSummary | None) -> Flaw | None:
    """The same rules as `_mlflow_flaw`, read from the run's own record."""
    status, record = manifest.status, invalidation_of(store)
    if record is not None:
        return _invalidated(record.get("invalid_reason"), record.get("superseded_by"))
    if status == "finished" and (mark := invalid_reason(manifest)):  # a mark from before invalidation.json
        return Flaw("invalidated", f"was {mark}")
    if status == STOPPED_EARLY:
        block = summary.stop_early if summary is not None else None
        if block is not None and block.items_run is not None and block.items_total is not None:
            return _stopped(f"at {block.items_run} of {block.items_total} items")
        return _stopped("(status stopped_early)")
    if status != "finished":
        return Flaw("unfinished", f"did not finish (status {status})")
    if manifest.options.limit is not None:
        return Flaw("limit", f"ran only {manifest.options.limit} items (--limit)")
    return None


def mlflow_runs(client: Any, project: str, experiment: str, prompt: str, version: int | str) -> list[CandidateRun]:
    """The MLflow runs of `experiment` tagged with `version` of `prompt`, newest first (at most MAX_RUNS)."""
    found = find_experiment(client, project, experiment)
    if found is None:
        return []
    filters = f"tags.`prompt.{prompt}.version` = '{version}' and tags.`scoregate.experiment` = '{experiment}'"
    runs = client.search_runs(
        [found.experiment_id], filter_string=filters, order_by=["attributes.start_time DESC"], max_results=MAX_RUNS
    )
    return [_mlflow_run(run) for run in runs]


def _mlflow_run(run: Any) -> CandidateRun:
    tags, params = run.data.tags, run.data.params
    gates = {key.removeprefix("gate."): value for key, value in tags.items() if _is_gate_tag(key)}
    quarantine = {name: counts for name in gates if (counts := _quarantine(tags.get(f"gate.{name}.quarantine")))}
    return CandidateRun(
        tags.get(RUN_ID_TAG), run.info.run_id, (run.info.start_time or 0) / 1000, False, _mlflow_flaw(run),
        params.get("model_name") or params.get("model"),  # `model` held the provider's id in runs mirrored earlier
        params.get("gates_hash"), tags.get("scoregate.verdict"), gates, quarantine,
    )  # fmt: skip


def _is_gate_tag(key: str) -> bool:
    return key.startswith("gate.") and not key.endswith((".quarantine", ".detail"))


def _mlflow_flaw(run: Any) -> Flaw | None:
    tags, params, metrics = run.data.tags, run.data.params, run.data.metrics
    if tags.get("scoregate.valid") == "false":  # `scoregate runs invalidate`
        return _invalidated(tags.get(REASON_TAG), tags.get(SUPERSEDED_TAG))
    if run.info.status != "FINISHED":
        return Flaw("unfinished", f"did not finish (status {run.info.status})")
    status = tags.get("scoregate.status", "finished")
    if status == STOPPED_EARLY or str(tags.get("scoregate.stop_early", "")).startswith("stopped at"):
        done, total = metrics.get("stop_early.items_run"), metrics.get("stop_early.items_total")
        if done is None or total is None:
            return _stopped(f"({tags.get('scoregate.stop_early', 'status stopped_early')})")
        return _stopped(f"at {int(done)} of {int(total)} items")
    if status != "finished":
        return Flaw("unfinished", f"did not finish (status {status})")
    if params.get("limit", "None") != "None":
        return Flaw("limit", f"ran only {params['limit']} items (--limit)")
    return None


def _invalidated(reason: str | None, superseded_by: str | None) -> Flaw:
    return Flaw(
        "invalidated", f"was invalidated: {reason}" + (f"; superseded by {superseded_by}" if superseded_by else "")
    )


def _stopped(where: str) -> Flaw:
    return Flaw("stopped_early", f"stopped early {where}: not the whole dataset")


def _quarantine(tag: str | None) -> dict[str, int] | None:
    """The tag `gate.<name>.quarantine` read back; None without one."""
    if not tag:
        return None
    try:
        counts = json.loads(tag)
        return {key: int(counts[key]) for key in QUARANTINE_KEYS}
    except (ValueError, KeyError, TypeError):
        return {"kept_out": 1, "breaking": 1, "gated": 0, "total": 0}  # unreadable: assume the worst


def _seconds(iso: str | None) -> float:
    try:
        return datetime.fromisoformat(str(iso)).timestamp()
    except ValueError:
        return 0.0


def candidate_runs(local: list[CandidateRun], mirrored: list[CandidateRun]) -> list[CandidateRun]:
    """Both sources as one list, newest first: a run in both is the store's, with its MLflow id."""
    by_id = {run.run_id: run for run in mirrored if run.run_id is not None}
    merged = [_with_mlflow_id(run, by_id.get(run.run_id or "")) for run in local]
    held = {run.run_id for run in local}
    merged += [run for run in mirrored if run.run_id is None or run.run_id not in held]
    return sorted(merged, key=lambda run: run.started, reverse=True)


def _with_mlflow_id(run: CandidateRun, mirror: CandidateRun | None) -> CandidateRun:
    return run if mirror is None else replace(run, mlflow_run_id=mirror.mlflow_run_id)
