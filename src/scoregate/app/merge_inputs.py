"""The shard directories a merge reads: found, checked one by one and against each other, before anything is written.

Every problem is a ScoregateError naming the shard and what is wrong, so a bad input merges nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoregate.app.run.receipts import resume_conflicts
from scoregate.errors import ScoregateError
from scoregate.store.lock import held_by
from scoregate.store.record import Manifest, ModelReceipt
from scoregate.store.record_files import read_manifest
from scoregate.store.run_lookup import closest
from scoregate.store.run_store import MANIFEST, RESULTS, RunStore
from scoregate.store.shards import Shard, shards_dir

MERGE_HINT = "nothing was merged; fix the shard directories and run `scoregate merge` again"


@dataclass(frozen=True)
class ShardInput:
    """One shard directory a merge reads: its shard, manifest and store."""

    shard: Shard
    directory: Path
    manifest: Manifest

    @property
    def store(self) -> RunStore:
        """The shard's run store."""
        return RunStore(self.directory)

    @property
    def label(self) -> str:
        """`shard 2-of-4 (path)`, as errors name it."""
        return f"shard {self.shard.name} ({self.directory})"


def _candidates(run_dir: Path, given: list[Path]) -> list[Path]:
    """The shard directories: those given (or found under a folder given), else `runs/<id>/shards/*`."""
    if not given:
        found = sorted(p for p in shards_dir(run_dir).glob("*") if p.is_dir()) if shards_dir(run_dir).is_dir() else []
        if not found:
            sharded = [d.name for d in run_dir.parent.glob("*") if shards_dir(d).is_dir()]
            raise ScoregateError(
                f"no shards of run {run_dir.name} in {shards_dir(run_dir)}{closest(run_dir.name, sharded)}",
                hint="run the shards first (`scoregate run EXPERIMENT --shard I/N`), or name their directories: "
                f"`scoregate merge {run_dir.name} DIR ...`",
            )
        return found
    out: list[Path] = []
    for path in given:
        if not path.is_dir():
            raise ScoregateError("no such shard directory", where=str(path), hint=MERGE_HINT)
        if (path / MANIFEST).exists() or (path / RESULTS).exists():
            out.append(path)
            continue
        inner = shards_dir(path) if shards_dir(path).is_dir() else path
        children = sorted(
            p for p in inner.iterdir() if p.is_dir() and ((p / MANIFEST).exists() or (p / RESULTS).exists())
        )
        if not children:
            raise ScoregateError(
                "not a shard directory (no manifest.json) and holds none", where=str(path), hint=MERGE_HINT
            )
        out += children
    return out


def _read(directory: Path, run_id: str) -> ShardInput:
    """Check one shard directory on its own: not running, complete files, of this run."""
    pid = held_by(directory)
    if pid is not None:
        raise ScoregateError(
            f"shard is still running (process {pid} holds its lock)",
            where=str(directory),
            hint="wait for it to finish (or stop it), then merge; nothing was merged",
        )
    if not (directory / MANIFEST).is_file():
        raise ScoregateError(
            "half-written shard: no manifest.json (the shard was cut off while starting, or the copy is partial)",
            where=str(directory),
            hint="run that shard again (the same command) or copy it again; nothing was merged",
        )
    manifest = read_manifest(directory / MANIFEST, hint=MERGE_HINT)  # no receipts: a damaged file, named
    block = manifest.shard
    if block is None:
        raise ScoregateError(
            "not a shard of a sharded run (its manifest has no `shard`)",
            where=str(directory / MANIFEST),
            hint=MERGE_HINT,
        )
    if block.run_id != run_id:
        raise ScoregateError(
            f"this shard belongs to run {block.run_id!r}, not {run_id!r}",
            where=str(directory),
            hint="merge each run's own shards; give the run id the shards were started with",
        )
    try:
        shard = Shard(block.index, block.count)
    except ScoregateError:  # an index out of its count
        raise ScoregateError(
            "damaged `shard` block in the manifest", where=str(directory / MANIFEST), hint=MERGE_HINT
        ) from None
    results = directory / RESULTS
    if not results.is_file():
        raise ScoregateError("half-written shard: no results.jsonl", where=str(directory), hint=MERGE_HINT)
    if RunStore(directory).needs_repair():
        raise ScoregateError(
            "half-written shard: results.jsonl ends in a partial line (the shard was killed while writing)",
            where=str(results),
            hint="run that shard again (the same command resumes and repairs it), then merge; nothing was merged",
        )
    return ShardInput(shard, directory, manifest)


def _who(model: ModelReceipt | None) -> tuple[str | None, str | None]:
    return (model.name, model.model) if model is not None else (None, None)


def _receipt_mismatch(first: ShardInput, other: ShardInput) -> list[str]:
    """What `other` ran differently from `first`, each part by name."""
    before, now = first.manifest.receipts, other.manifest.receipts
    out = []
    old_commit, new_commit = before.git_commit(), now.git_commit()
    if old_commit != new_commit:
        out.append(f"commit {str(new_commit)[:12]} (shard {first.shard.name} ran {str(old_commit)[:12]})")
    for part, a, b in (("model", before.model, now.model), ("judge_model", before.judge_model, now.judge_model)):
        if _who(a) != _who(b):
            out.append(f"{part} {_who(b)[0]} (shard {first.shard.name} used {_who(a)[0]})")
    out += [c.replace("changed", "differ", 1) for c in resume_conflicts(before, now)]
    was, runs = first.manifest.options, other.manifest.options
    for option, ours, theirs in (("limit", was.limit, runs.limit), ("repeat", was.repeat, runs.repeat)):
        if ours != theirs:
            out.append(f"option {option} {theirs} (shard {first.shard.name}: {ours})")
    return out


def gather_shards(run_dir: Path, given: list[Path]) -> list[ShardInput]:
    """Read and check every shard of the run at `run_dir`; return one input per index, in index order."""
    try:
        return _gather(run_dir, given)
    except ScoregateError as exc:  # every refusal says that nothing was written
        if "nothing was merged" not in (exc.hint or ""):
            exc.hint = f"{exc.hint}; nothing was merged" if exc.hint else "nothing was merged"
        raise


def _gather(run_dir: Path, given: list[Path]) -> list[ShardInput]:
    run_id = run_dir.name
    inputs = [_read(directory, run_id) for directory in _candidates(run_dir, given)]
    counts = {i.shard.count for i in inputs}
    if len(counts) > 1:
        listing = ", ".join(f"{i.directory} says {i.shard.count}" for i in inputs)
        raise ScoregateError(
            f"the shards disagree on the number of shards N: {listing}",
            hint="every shard of one run is started with the same N; merge only those",
        )
    by_index: dict[int, ShardInput] = {}
    for item in inputs:
        seen = by_index.get(item.shard.index)
        if seen is None:
            by_index[item.shard.index] = item
        elif _item_ids(seen) != _item_ids(item):
            raise ScoregateError(
                f"two directories claim shard {item.shard.name} with different items: {seen.directory} and "
                f"{item.directory}",
                hint="keep the one that belongs to this run (the other is another attempt's copy); nothing was merged",
            )
    ordered = [by_index[k] for k in sorted(by_index)]
    first = ordered[0]
    for other in ordered[1:]:
        problems = _receipt_mismatch(first, other)
        if problems:
            raise ScoregateError(
                f"{other.label} does not match {first.label}: it ran with {'; '.join(problems)}",
                hint="shards of one run must run the same commit, plan, dataset, prompts, models and evaluators; "
                "re-run the odd shard, then merge; nothing was merged",
            )
    return ordered


def _item_ids(shard: ShardInput) -> set[str]:
    return {record.item_id for record in shard.store.iter_all_records()}
