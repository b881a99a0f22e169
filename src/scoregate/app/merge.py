"""`scoregate merge`: the one writer of a sharded run. It checks the shards (`scoregate.app.merge_inputs`), joins
their newest records into `runs/<run_id>/results.jsonl`, then summarises, gates, reports and mirrors like a run.

Items or shards that are missing make every gate INCOMPLETE, naming the items. A merge records a digest of what it
read; a second merge of the same shards writes nothing, and a merge cut off part-way is simply run again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoregate.app.merge_inputs import MERGE_HINT, ShardInput, gather_shards
from scoregate.app.merge_outcome import MergeOutcome, incomplete_reason
from scoregate.app.run.receipts import config_parts
from scoregate.app.run.run_options import runs_dir
from scoregate.app.run.shards import planned_ids as planned_ids_of
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.store.lock import RunLock
from scoregate.store.record import SCHEMA_VERSION, Manifest, Receipts, RunSummary
from scoregate.store.results_index import DamagedLine
from scoregate.store.run_store import MANIFEST, RESULTS, RunStore, run_directory
from scoregate.store.shards import Shard, ShardStore, assign, newest_lines, write_manifest
from scoregate.support.redaction import redact
from scoregate.tracks.project import load_project


def _digest(inputs: list[ShardInput]) -> str:
    """A hash of every byte the merge reads from the shards (their manifests' receipts and results)."""
    digest = hashlib.sha256()
    for item in inputs:
        digest.update(f"{item.shard.name}\0{sorted(item.manifest.receipts.to_dict().items())!r}\0".encode())
        with (item.directory / RESULTS).open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def _join(inputs: list[ShardInput], planned: dict[str, int], out: Path) -> set[str]:
    """Write the newest record of every (item, repeat) of every shard to `out`; return the ids of repeat 1."""
    present: set[str] = set()
    partial = out.with_name(f".{out.name}.merging")
    with partial.open("wb") as handle:
        for item in inputs:
            path = item.directory / RESULTS
            try:
                for item_id, repeat, raw in newest_lines(path):
                    if item_id not in planned:
                        raise ScoregateError(
                            f"{item.label} holds item {item_id!r}, which the run did not plan (not in the dataset)",
                            where=str(path),
                            hint=MERGE_HINT,
                        )
                    if planned[item_id] != item.shard.index:
                        raise ScoregateError(
                            f"{item.label} holds item {item_id!r}, which belongs to another shard: the shards "
                            "split the items differently",
                            where=str(path),
                            hint=MERGE_HINT,
                        )
                    handle.write(raw)
                    if repeat == 1:
                        present.add(item_id)
            except DamagedLine as exc:
                partial.unlink(missing_ok=True)
                raise ScoregateError(
                    f"damaged result record ({exc.detail})", where=f"{path}:{exc.line}", hint=MERGE_HINT
                ) from None
            except ScoregateError:
                partial.unlink(missing_ok=True)
                raise
    partial.replace(out)
    return present


def _manifest(
    inputs: list[ShardInput], run_id: str, previous: Manifest | None, shards: dict[str, Any]
) -> dict[str, Any]:
    """The merged run's manifest: the shards' receipts and options, their earliest start and latest end."""
    first = inputs[0].manifest
    started = min(i.manifest.started_at or "" for i in inputs)
    finished = max(i.manifest.finished_at or i.manifest.started_at or "" for i in inputs)
    revision = (-1 if previous.revision is None else previous.revision) + 1 if previous else 0
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "status": "finished",
        "started_at": started,
        "finished_at": finished,
        "merged_at": datetime.now(UTC).isoformat(),
        "options": first.options.to_dict(),
        "receipts": first.receipts.to_dict(),
        "model_checks": [c for i in inputs for c in i.manifest.model_checks or []],
        "revision": revision,
        "merge": {**shards, "inputs": None},
    }


def _incomplete(summary: dict[str, Any], missing: list[str], missing_shards: list[str], planned: int) -> dict[str, Any]:
    """Every gate INCOMPLETE, naming the missing items (and shards): a run with holes decides nothing."""
    detail = incomplete_reason(missing, missing_shards, planned)
    gates = [
        {**gate.to_dict(), "status": "incomplete", "detail": f"{detail} (measured: {gate.status}, {gate.detail})"}
        for gate in RunSummary.model_validate(summary).gates
    ]
    return {
        **summary,
        "gates": gates,
        "verdict": "incomplete",
        "incomplete": {"missing_items": missing, "missing_shards": missing_shards, "planned_items": planned},
    }


def merge_run(
    root: Path,
    run_id: str,
    shard_dirs: list[Path] | None = None,
    *,
    no_mirror: Collection[str] = (),
    write_report: bool = True,
) -> MergeOutcome:
    """Merge the shards of run `run_id` into one run (idempotent, resumable), mirroring it to every sink not named
    in `no_mirror`; raise ScoregateError on bad input."""
    from scoregate.app.mirror_sync import sink_choice
    from scoregate.catalog.plan import plan_experiment

    no_mirror = sink_choice(no_mirror, "--no-mirror")
    project = load_project(root)
    run_dir = run_directory(runs_dir(project), run_id)
    inputs = gather_shards(run_dir, list(shard_dirs or []))
    receipts, options = inputs[0].manifest.receipts, inputs[0].manifest.options
    model = receipts.model.name if receipts.model is not None else None
    if receipts.experiment is None or model is None:
        raise ScoregateError(
            "damaged shard manifest: its receipts name no experiment or no model",
            where=str(inputs[0].directory / MANIFEST), hint=MERGE_HINT,
        )  # fmt: skip
    judge = receipts.judge_model.name if receipts.judge_model is not None else None
    plan = plan_experiment(project, receipts.experiment, model=model, judge_model=judge)
    _check_project(project, plan, receipts)
    count = inputs[0].shard.count
    present_shards = {i.shard.index for i in inputs}
    missing_shards = [Shard(k, count).name for k in range(count) if k not in present_shards]
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir, hint="another merge of this run is going on; wait for it"):
        digest = _digest(inputs)
        store = RunStore(run_dir)
        previous = store.manifest_record if (run_dir / MANIFEST).is_file() else None
        names = [i.shard.name for i in inputs]
        if previous is not None and _done(store, previous, digest, project, no_mirror):
            done = MergeOutcome(
                run_id, store, store.summary or {}, names, missing_shards,
                nothing_to_do=f"run {run_id} is already merged from these shards ({', '.join(names)}); nothing changed",
            )  # fmt: skip
            incomplete = done.summary_record.incomplete
            done.missing_items = list(incomplete.missing_items) if incomplete is not None else []
            return done
        planned_ids = planned_ids_of(plan.dataset.path, options.limit)
        present = _join(inputs, assign(planned_ids, count), run_dir / RESULTS)
        missing = [item_id for item_id in planned_ids if item_id not in present]
        shards = {
            "count": count,
            "shards": {i.shard.name: {"directory": str(i.directory), "status": i.manifest.status} for i in inputs},
            "missing_shards": missing_shards,
            "missing_items": len(missing),
        }
        write_manifest(run_dir, _manifest(inputs, run_id, previous, shards))
        outcome = _summarise(store, plan, project, names, missing_shards, missing, len(planned_ids))
        if write_report:
            _write_report(store, project, outcome)
        _mirror(store, project, inputs, outcome, no_mirror)
        if not outcome.mirror_errors:  # recorded last: a merge cut off before this point is redone in full
            merged = store.manifest_record.merge
            store.update_manifest(merge={**(merged.to_dict() if merged is not None else {}), "inputs": digest})
        return outcome


def _check_project(project: Project, plan: Any, receipts: Receipts) -> None:
    """The merge plans with the project as it is now: it must be what the shards ran."""
    if receipts.dataset is None or plan.dataset_scan.content_hash != receipts.dataset.content_hash:
        raise ScoregateError(
            f"the dataset {plan.dataset.name} changed since the shards ran",
            where=str(plan.dataset.path),
            hint="merge with the dataset the shards ran (check out their commit); nothing was merged",
        )
    now, then = config_parts(project, plan), receipts.config_parts or {}
    changed = sorted(p for p in now.keys() | then.keys() if now.get(p) != then.get(p))
    if changed:
        raise ScoregateError(
            f"scoregate.yaml changed since the shards ran ({', '.join(changed)})",
            where=str(project.config_path),
            hint="merge with the configuration the shards ran (check out their commit); nothing was merged",
        )


def _done(store: RunStore, previous: Manifest, digest: str, project: Project, skip: Collection[str]) -> bool:
    """True when the stored merge read exactly these shards and finished (no mirror of it cut short by a kill)."""
    if previous.merge is None or previous.merge.inputs != digest or store.summary is None:
        return False
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import cut_short

    return not cut_short(store, SinkContext(project.root, loaded=project), skip=skip)


def _mirror(
    store: RunStore, project: Project, inputs: list[ShardInput], outcome: MergeOutcome, skip: Collection[str]
) -> None:
    """Mirror the merged run to every sink not in `skip`, like any run: the sinks that adopt shards first take over
    what the shards mirrored (nothing is sent twice), and the sinks that count items check the server has them."""
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import AdoptShards, Mirror, mirror_all

    context = SinkContext(project.root, loaded=project)
    shards = tuple(ShardStore(i.directory, store.run_id) for i in inputs)
    adopted = mirror_all(AdoptShards(store, shards), context, skip=skip)
    outcome.mirror_errors.update(adopted.troubles())
    mirrored = mirror_all(Mirror(store, count_items=True), context, skip=[*skip, *adopted.troubles()])
    for name, result in mirrored.results.items():
        report = result.report
        if report.link:
            outcome.mirrors[name] = report.link
        outcome.mirror_notes += [report.skipped] if report.skipped else report.lines
        if result.trouble:
            outcome.mirror_errors[name] = result.trouble
    outcome.mirror_notes += mirrored.notes


def _summarise(
    store: RunStore,
    plan: Any,
    project: Project,
    names: list[str],
    missing_shards: list[str],
    missing: list[str],
    planned: int,
) -> MergeOutcome:
    """Summary, CIs and gates of the merged records, as a run computes them; INCOMPLETE where items are missing."""
    from scoregate.app.run.summary import summarize_run
    from scoregate.store.telemetry import write_telemetry

    summary = summarize_run(store, plan, project)
    if missing:
        summary = _incomplete(summary, missing, missing_shards, planned)
        store.write_summary(summary)
    write_telemetry(store)
    return MergeOutcome(store.run_id, store, summary, names, missing_shards, missing)


def _write_report(store: RunStore, project: Project, outcome: MergeOutcome) -> None:
    """Write the run's report (before the mirrors: MLflow logs it); a failure is reported."""
    from scoregate.report.write import project_report_options, write_run_report

    try:
        outcome.report = write_run_report(store, project_report_options(project.root))
    except Exception as exc:  # the run is stored; `scoregate report RUN` writes it again
        outcome.mirror_errors["report"] = redact(f"{type(exc).__name__}: {exc}")
