"""A shard of a run: which shard this process is (`--shard I/N` or `auto`), the run id every shard shares, the
shard's own store under `runs/<run_id>/shards/<I>-of-<N>/`, its share of the rate budget, and its end.

A shard runs its items (resumable, locked, kill -9 safe: it is a run store) and never writes run-level scores,
gates, a report or MLflow; `scoregate merge` (`scoregate.app.merge`) is the only writer of the whole run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.app.run.receipts import config_parts, prompt_fingerprint, sha256_text
from scoregate.app.run.run_options import RunOptions, RunOutcome, runs_dir
from scoregate.catalog.datasets import decode_line, parse_line
from scoregate.errors import ScoregateError
from scoregate.store.run_store import RunStore, run_directory
from scoregate.store.shards import Shard, ShardStore, assign, shards_dir

if TYPE_CHECKING:
    from scoregate.app.run.opened_run import OpenedRun
    from scoregate.catalog.models import DatasetItem
    from scoregate.catalog.plan import ExperimentPlan
    from scoregate.catalog.project import Project

SHARD_HINT = (
    "give `--shard I/N` (0-based I, e.g. --shard 0/4), or `--shard auto` inside a Kubernetes Indexed Job "
    "(JOB_COMPLETION_INDEX, with --shards N or SCOREGATE_SHARDS) or a SLURM array (SLURM_ARRAY_TASK_ID/COUNT)"
)


def _count(text: str, source: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ScoregateError(f"{source}={text!r} is not a number of shards", hint=SHARD_HINT) from None
    if value < 1:
        raise ScoregateError(f"{source}={value}: a sharded run needs at least 1 shard", hint=SHARD_HINT)
    return value


def _index(text: str, source: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ScoregateError(f"{source}={text!r} is not a shard index", hint=SHARD_HINT) from None


def _checked(index: int, count: int, source: str) -> Shard:
    if not 0 <= index < count:
        raise ScoregateError(
            f"shard index {index} (from {source}) is out of range for {count} shards",
            hint=f"the index is 0-based: 0 to {count - 1}; check the count you gave",
        )
    return Shard(index, count)


def parse_shard(value: str, *, shards: int | None = None, env: Mapping[str, str] | None = None) -> Shard:
    """The shard `--shard VALUE` names: `I/N`, or `auto` (Kubernetes Indexed Job, else SLURM array)."""
    env = os.environ if env is None else env
    if value != "auto":
        index_text, sep, count_text = value.partition("/")
        if not sep:
            raise ScoregateError(f"--shard {value!r}: expected I/N (e.g. 0/4) or auto", hint=SHARD_HINT)
        return _checked(_index(index_text, "--shard"), _count(count_text, "--shard"), f"--shard {value}")
    if "JOB_COMPLETION_INDEX" in env:
        if shards is not None:
            count, source = shards, "--shards"
        elif "SCOREGATE_SHARDS" in env:
            count, source = _count(env["SCOREGATE_SHARDS"], "SCOREGATE_SHARDS"), "SCOREGATE_SHARDS"
        else:
            raise ScoregateError(
                "--shard auto: JOB_COMPLETION_INDEX is set but no shard count was given",
                hint="pass --shards N or set SCOREGATE_SHARDS to the Job's `completions`",
            )
        return _checked(
            _index(env["JOB_COMPLETION_INDEX"], "JOB_COMPLETION_INDEX"), count, f"JOB_COMPLETION_INDEX/{source}"
        )
    if "SLURM_ARRAY_TASK_ID" in env:
        if shards is None and "SLURM_ARRAY_TASK_COUNT" not in env:
            raise ScoregateError(
                "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
                hint="pass --shards N, or run inside an `sbatch --array=0-(N-1)` job",
            )
        count = shards if shards is not None else _count(env["SLURM_ARRAY_TASK_COUNT"], "SLURM_ARRAY_TASK_COUNT")
        first = _index(env.get("SLURM_ARRAY_TASK_MIN", "0"), "SLURM_ARRAY_TASK_MIN")
        index = _index(env["SLURM_ARRAY_TASK_ID"], "SLURM_ARRAY_TASK_ID") - first
        return _checked(index, count, "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN")
    raise ScoregateError("--shard auto: neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set", hint=SHARD_HINT)


def plan_digest(project: Project, plan: ExperimentPlan, options: RunOptions) -> str:
    """A hash of what a run of `plan` measures (the config parts it reads, prompts, model, items asked for)."""
    parts = {
        "config": config_parts(project, plan),
        "prompts": {name: prompt_fingerprint(spec) for name, spec in plan.prompts.items()},
        "model": plan.model_name,
        "judge_model": plan.judge_model_name,
        "limit": options.selection.limit,
        "repeat": options.selection.repeat,
    }
    return sha256_text(json.dumps(parts, sort_keys=True, default=str))


def derive_run_id(experiment: str, plan_hash: str, dataset_hash: str, group: str | None) -> str:
    """The run id every shard of one run computes alike: `<experiment>-shards-<12 hex>` of what they all know."""
    key = json.dumps([experiment, plan_hash, dataset_hash, group or ""])
    return f"{experiment}-shards-{sha256_text(key)[:12]}"


def divide_budget(project: Project, count: int) -> None:
    """Give this shard 1/count of each model's `max_connections` (rounded up), unless settings say `whole`."""
    if count == 1 or project.config.settings.shard_budget == "whole":
        return
    models = project.config.models
    for name, spec in list(models.items()):
        models[name] = spec.model_copy(update={"max_connections": max(1, math.ceil(spec.max_connections / count))})


def prepare_shard(project: Project, experiment: str, options: RunOptions) -> OpenedRun:
    """Divide the budget, resolve the run id (given, or derived from the plan, which the plan step then keeps);
    return the options, the shard's store if it exists already (a re-run of the same index resumes it) and the
    plan if one was built."""
    from scoregate.app.run.opened_run import OpenedRun
    from scoregate.catalog.plan import plan_experiment

    shard = options.sharding.shard
    assert shard is not None
    divide_budget(project, shard.count)  # first, so a plan built here holds each model's share (not hashed)
    run_id = options.selection.run_id
    plan = None
    if run_id is None:
        plan = plan_experiment(
            project,
            experiment,
            model=options.models.model,
            judge_model=options.models.judge_model,
            model_from=options.models.model_from,
        )
        run_id = derive_run_id(
            plan.name, plan_digest(project, plan, options), plan.dataset_scan.content_hash, options.sharding.group
        )
    directory = shard_directory(project, run_id, shard)
    options = replace(
        options, selection=replace(options.selection, run_id=run_id), mirrors=replace(options.mirrors, report=False)
    )
    if not (directory / "manifest.json").is_file():
        return OpenedRun(options, None, plan)
    store = RunStore(directory)
    stored = store.manifest_record.shard
    if stored is None or stored.run_id != run_id:
        raise ScoregateError(f"{directory} is not shard {shard.name} of run {run_id}", where=str(directory))
    return OpenedRun(options, store, plan)


def shard_directory(project: Project, run_id: str, shard: Shard) -> Path:
    """`runs/<run_id>/shards/<I>-of-<N>/` (the run id checked as one)."""
    return shards_dir(run_directory(runs_dir(project), run_id)) / shard.name


def create_shard_store(project: Project, options: RunOptions, manifest: dict[str, Any]) -> RunStore:
    """Create the shard's store, its manifest naming the run and the shard."""
    shard, run_id = options.sharding.shard, options.selection.run_id
    assert shard is not None and run_id is not None
    directory = shard_directory(project, run_id, shard)
    manifest = {
        **manifest,
        "run_id": run_id,
        "shard": {**shard.to_dict(), "run_id": run_id, "group": options.sharding.group},
    }
    return RunStore.create(directory.parent, shard.name, manifest)


def planned_ids(path: Path, limit: int | None) -> list[str]:
    """The ids of the first `limit` items of the dataset at `path` (the plan checked every line already); a line's
    `id` is read without building the item, and an item without one gets its default id as the run does."""
    out: list[str] = []
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if limit is not None and len(out) >= limit:
                break
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError:  # a BOM, say: the full parse below says what the run reads
                row = None
            item_id = row.get("id") if isinstance(row, dict) else None
            if not isinstance(item_id, str) or not item_id:
                item_id = str(parse_line(path, line_no, decode_line(path, line_no, raw)).id)
            out.append(item_id)
    return out


def shard_members(path: Path, limit: int | None, shard: Shard) -> set[str]:
    """The ids of the first `limit` dataset items that belong to `shard` (`scoregate.store.shards.assign`)."""
    assignment = assign(planned_ids(path, limit), shard.count)
    return {item_id for item_id, index in assignment.items() if index == shard.index}


def shard_items(
    items: Iterator[tuple[int, DatasetItem]], members: AbstractSet[str] | None
) -> Iterator[tuple[int, DatasetItem]]:
    """The items of `items` whose id is in `members` (all of them when None: the run is not sharded)."""
    if members is None:
        return items
    return ((index, item) for index, item in items if item.id in members)


def run_or_shard_label(store: RunStore, options: RunOptions) -> str:
    """`run ID`, or `shard I-of-N of run ID` for a shard."""
    if options.sharding.shard is None:
        return f"run {store.run_id}"
    return f"shard {options.sharding.shard.name} of run {options.selection.run_id}"


def resume_command(store: RunStore, options: RunOptions) -> str:
    """The command that resumes this run: `--resume ID`, or for a shard the same shard command again."""
    if options.sharding.shard is None:
        return f"scoregate run --resume {store.run_id}"
    experiment = store.manifest_record.receipts.experiment
    shard = options.sharding.shard
    return f"scoregate run {experiment} --shard {shard.index}/{shard.count} --run-id {options.selection.run_id}"


def finished_shard_note(store: RunStore, project: Project, options: RunOptions) -> str | None:
    """Why running this shard again calls no model (finished, every item of it stored whole, no failed item asked
    for again), else None."""
    shard, manifest = options.sharding.shard, store.manifest_record
    if shard is None or options.resume.quarantine or manifest.status != "finished" or store.needs_repair():
        return None
    dataset = project.datasets.get(manifest.receipts.dataset.name) if manifest.receipts.dataset else None
    if dataset is None:
        return None
    from scoregate.store.repeats import done_by_repeat, failed_records

    members = shard_members(dataset.path, manifest.options.limit, shard)
    done = done_by_repeat(store)
    if any(not members <= done.get(repeat, set()) for repeat in range(1, manifest.options.repeat + 1)):
        return None  # items lost after it finished: running it again redoes them
    if options.resume.retry_errors and failed_records(store):
        return None
    nothing = "no item failed, nothing to retry" if options.resume.retry_errors else "nothing to run"
    return (
        f"shard {shard.name} of run {options.selection.run_id} already finished; no model was called ({nothing}). "
        f"When every shard is done: `scoregate merge {options.selection.run_id}`"
    )


def finish_shard(store: RunStore, project: Project, options: RunOptions) -> RunOutcome:
    """End a shard: per-call telemetry, its items on the sinks that stream shards; no summary, gates or report."""
    from scoregate.store.telemetry import write_telemetry

    shard, run_id = options.sharding.shard, options.selection.run_id
    assert shard is not None and run_id is not None
    write_telemetry(store)
    items = failed = 0
    for result in store.iter_results():
        items += 1
        failed += result.error is not None
    summary = {
        "run_id": run_id,
        "shard": shard.to_dict(),
        "run_metrics": {"items": items, "error_count": failed},
        "verdict": "no_gates",
    }
    outcome = RunOutcome(run_id=run_id, store=store, summary=summary, shard=shard.name)
    _mirror_items(ShardStore(store.directory, run_id), project, outcome, options.mirrors.off)
    return outcome


def _mirror_items(store: RunStore, project: Project, outcome: RunOutcome, skip: frozenset[str]) -> None:
    """Send the shard's items to the sinks that stream a shard's items (each when configured, and not in `skip`);
    the other sinks mirror whole runs and so only the merged one."""
    from scoregate.sinks.contract import SinkContext
    from scoregate.sinks.mirror_all import MirrorShard, mirror_all

    context = SinkContext(project.root, loaded=project)
    outcome.add_mirrors(mirror_all(MirrorShard(store), context, skip=skip))
