"""Shards of one run: which shard each item belongs to, and where a shard's files live (`runs/<id>/shards/<I>-of-<N>/`).

The rule: sort the run's planned items by the SHA-256 of their id (UTF-8); the k-th item in that order goes to shard
k mod N. It depends only on the planned item ids and N, so every shard (and the merge) computes the same split
without talking to the others, a re-run of shard I does the same items, and the shards' sizes differ by at most one
item. (The dataset's hash is part of a sharded run's id: a changed dataset is a new run.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.store.run_store import RunStore

SHARDS = "shards"
"""The folder of a run directory that holds its shards."""

_NAME = re.compile(r"(\d{1,6})-of-(\d{1,6})")


def assign(item_ids: Iterable[str], count: int) -> dict[str, int]:
    """Map each planned item id to its 0-based shard among `count` (the rule in the module docstring)."""
    order = sorted(
        dict.fromkeys(item_ids), key=lambda item_id: hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).digest()
    )
    return {item_id: position % count for position, item_id in enumerate(order)}


@dataclass(frozen=True, order=True)
class Shard:
    """Shard `index` (0-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ScoregateError(f"a sharded run needs at least 1 shard, not {self.count}")
        if not 0 <= self.index < self.count:
            raise ScoregateError(
                f"shard index {self.index} is out of range for {self.count} shards",
                hint=f"the index is 0-based: 0 to {self.count - 1}",
            )

    @property
    def name(self) -> str:
        """The shard's folder name, `<I>-of-<N>`."""
        return f"{self.index}-of-{self.count}"

    def to_dict(self) -> dict[str, int]:
        """The manifest's `shard` block."""
        return {"index": self.index, "count": self.count}


def parse_shard_name(name: str) -> Shard | None:
    """The shard a folder named `<I>-of-<N>` holds, or None for any other name."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    index, count = int(match.group(1)), int(match.group(2))
    return Shard(index, count) if 0 <= index < count else None


def shards_dir(run_directory: Path) -> Path:
    """Where the shards of the run stored at `run_directory` live."""
    return run_directory / SHARDS


def newest_lines(path: Path) -> Iterator[tuple[str, int, bytes]]:
    """Yield (item id, repeat, raw line) of the newest record of each (item, repeat) in a results file, in file
    order (a record retried with `--retry-errors` replaces the older one, as in the run itself)."""
    from scoregate.store.results_index import index_results, record_id

    index = index_results(path, repeats=True)
    with path.open("rb") as handle:
        for position in range(len(index)):
            handle.seek(int(index.offsets[position]))
            raw = handle.readline()
            item_id, repeat = record_id(raw, int(index.lines[position]))
            yield item_id, repeat, raw


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Write a merged run's manifest.json whole (atomically), creating or replacing it."""
    from scoregate.store.run_files import MANIFEST, write_run_json

    write_run_json(directory / MANIFEST, manifest)


class ShardStore(RunStore):
    """A shard's store under the id of the run it belongs to, so what it mirrors (trace, score and experiment ids,
    all derived from the run id) is what the merged run would send: one experiment for every shard."""

    def __init__(self, directory: Path, run_id: str) -> None:
        super().__init__(directory)
        self.run_id = run_id
