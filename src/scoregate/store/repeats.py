"""Reading a repeated run's stored results: the newest record of every (item, repeat), resume points, retries."""

from __future__ import annotations

from collections.abc import Iterator

from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore


def iter_all_results(store: RunStore) -> Iterator[ItemResult]:
    """Yield the newest record of every (item id, repeat), streaming from disk (see RunStore.iter_all_records)."""
    yield from store.iter_all_records()


def done_by_repeat(store: RunStore, *, retry_errors: bool = False) -> dict[int, set[str]]:
    """Return repeat number → ids of the items already stored for it (the resume point of each repeat);
    with `retry_errors`, only those whose newest record succeeded, every call included."""
    done: dict[int, set[str]] = {}
    for result in iter_all_results(store):
        if not (retry_errors and result.needs_retry):
            done.setdefault(result.repeat, set()).add(result.item_id)
    return done


def failed_records(store: RunStore) -> set[tuple[str, int]]:
    """Return (item id, repeat) of every record whose newest version failed or has a failed call (a judge or a
    stage that could not be reached), in any repeat: what `--retry-errors` runs again."""
    return {(r.item_id, r.repeat) for r in iter_all_results(store) if r.needs_retry}


def repeat_key(item_id: str, repeat: int) -> str:
    """The id a record is mirrored under: the item id, suffixed `#repeat-N` for repeats 2..K."""
    return item_id if repeat == 1 else f"{item_id}#repeat-{repeat}"
