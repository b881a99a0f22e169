"""Run B against run A item by item: the items both runs share, largest change of a score first (`scoregate diff`)."""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from scoregate.analysis.columns import FloatColumn
from scoregate.analysis.items import numeric_scores, primary_score, word_diff
from scoregate.analysis.run_source import OrderedItems, RunSource
from scoregate.errors import ScoregateError
from scoregate.store.records import ItemResult
from scoregate.store.run_labels import receipts_identity, run_labels
from scoregate.support.figures import output_text

if TYPE_CHECKING:
    from scoregate.store.record import Receipts

Labelled = tuple[str, "Receipts"]
"""A run's id and receipts: what its label on an item is made of."""


@dataclass(frozen=True)
class ItemDiff:
    """One item both runs share: both outputs, their word diff, and each shared score's change (B − A)."""

    item_id: str
    prompt_a: str
    prompt_b: str
    output_a: str
    output_b: str
    word_diff: str
    scores_a: dict[str, float | None]
    scores_b: dict[str, float | None]
    deltas: dict[str, float | None]
    error_a: str | None
    error_b: str | None
    label_a: str = ""
    """What tells run A apart from run B on this item (model, prompt@version, dataset, experiment, judge)."""
    label_b: str = ""


@dataclass
class RunDiff:
    """Run B against run A item by item, sorted by the largest change of `by`.

    `items` may be read once only: each item's diff is made (both records read again, the word diff computed)
    as it is read, so a diff of 100,000 items never holds them all.
    """

    run_a: str
    run_b: str
    by: str | None
    shared_items: int
    items: Iterable[ItemDiff]
    notes: list[str] = field(default_factory=list)
    changed: int = 0
    """Shared items whose scores, output or error differ (all of them are in `items` unless --limit cut)."""
    unchanged: list[str] = field(default_factory=list)
    """Ids of the shared items with the same scores, output and error in both runs (not listed as changes)."""
    by_unchanged: bool = False
    """True when no listed item's `by` score changed (they changed other scores or their output)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready); reads every item into memory (`write_json` streams instead)."""
        items = [asdict(d) for d in self.items]
        return {**self._head(), "items": items, **self._tail()}

    def write_json(self, write: Callable[[str], object]) -> None:
        """Write the `to_dict` form as indented JSON one item at a time."""
        head = json.dumps(self._head(), indent=2, default=str)
        write(head[:-2] + ',\n  "items": [')
        for n, d in enumerate(self.items):
            write(("," if n else "") + "\n    " + json.dumps(asdict(d), indent=2, default=str).replace("\n", "\n    "))
        write("\n  ],\n" + json.dumps(self._tail(), indent=2, default=str)[2:] + "\n")

    def _head(self) -> dict[str, Any]:
        return {"run_a": self.run_a, "run_b": self.run_b, "by": self.by, "shared_items": self.shared_items}

    def _tail(self) -> dict[str, Any]:
        return {
            "notes": self.notes, "changed": self.changed, "unchanged": self.unchanged, "by_unchanged": self.by_unchanged
        }  # fmt: skip


def _item_diff(a: ItemResult, b: ItemResult, runs: tuple[Labelled, Labelled]) -> ItemDiff:
    sa, sb = numeric_scores(a), numeric_scores(b)
    ta, tb = output_text(a.output), output_text(b.output)
    (id_a, receipts_a), (id_b, receipts_b) = runs
    label_a, label_b = run_labels(
        [receipts_identity(id_a, receipts_a, a.prompt), receipts_identity(id_b, receipts_b, b.prompt)]
    )
    return ItemDiff(
        a.item_id, a.prompt, b.prompt, ta, tb, word_diff(ta, tb), sa, sb, _deltas(sa, sb), a.error, b.error,
        label_a, label_b,
    )  # fmt: skip


def _deltas(sa: dict[str, float | None], sb: dict[str, float | None]) -> dict[str, float | None]:
    """B − A of each score both items have (None where either is unmeasured)."""
    return {k: None if sa[k] is None or sb[k] is None else sb[k] - sa[k] for k in sa if k in sb}  # type: ignore[operator]


@dataclass
class _Pairs:
    """What sorting the shared items needs, a few numbers per item: positions, change flags, per-score deltas."""

    a: array[int] = field(default_factory=lambda: array("q"))
    b: array[int] = field(default_factory=lambda: array("q"))
    changed: bytearray = field(default_factory=bytearray)
    changed_scores: array[int] = field(default_factory=lambda: array("q"))
    deltas: dict[str, FloatColumn] = field(default_factory=dict)
    differs: dict[str, bytearray] = field(default_factory=dict)
    """Per score seen on either side: 1 where the two items' values differ (a value on one side only counts)."""
    keys: dict[str, None] = field(default_factory=dict)
    first_ids: list[str] = field(default_factory=list)

    def add(self, pa: int, pb: int, a: ItemResult, b: ItemResult) -> None:
        sa, sb = numeric_scores(a), numeric_scores(b)
        deltas = _deltas(sa, sb)
        self.keys.update(dict.fromkeys(deltas))
        for key in (*sa, *sb):
            if key not in self.deltas:  # first seen here: absent on both sides of every earlier pair
                self.deltas[key] = FloatColumn([None] * len(self.a))
                self.differs[key] = bytearray(len(self.a))
        for key, column in self.deltas.items():
            column.append(deltas.get(key))
            self.differs[key].append(sa.get(key) != sb.get(key))
        changed_scores = sum(sa.get(k) != sb.get(k) for k in deltas)
        changed = changed_scores > 0 or output_text(a.output) != output_text(b.output) or a.error != b.error
        self.a.append(pa)
        self.b.append(pb)
        self.changed.append(changed)
        self.changed_scores.append(changed_scores)
        if len(self.first_ids) < 10:
            self.first_ids.append(b.item_id)

    def order(self, selected: np.ndarray, by: str | None) -> np.ndarray:
        """`selected` pair positions, largest |Δ by| first; then `by` measured on one side only; then the rest."""
        if by is None:
            return selected
        delta, measured = self.deltas[by].arrays()
        nonzero = measured & (delta != 0)
        differs = np.frombuffer(bytes(self.differs[by]), dtype=np.uint8).astype(bool)
        group = np.where(nonzero, 0, np.where(differs, 1, 2))
        magnitude = np.where(measured, np.abs(delta), 0.0)
        counts = np.array(self.changed_scores, dtype=np.int64)
        keys = (selected, -counts[selected], -magnitude[selected], group[selected])
        return selected[np.lexsort(keys)]


def diff_runs(
    store_a: RunSource, store_b: RunSource, *, by: str | None = None, item: str | None = None, limit: int | None = None
) -> RunDiff:
    """Return the items both runs share, sorted by the largest |Δ| of `by` (default: the primary metric).

    Items with the same scores, output and error in both runs are not changes: only their ids are kept
    (`unchanged`). Items where `by` is unmeasured on one side come after those where it changed, then the
    items where only other scores or the output changed. `item` keeps only that item (changed or not).
    Raise ScoregateError when the runs share no item, or `by` / `item` is unknown.
    Memory holds a few numbers per shared item; the records are read again for the items listed.
    """
    ordered_a, ordered_b = store_a.ordered_results(), store_b.ordered_results()
    in_a = {result.item_id: position for position, result in enumerate(ordered_a)}
    pairs = _Pairs()
    unchanged: list[str] = []
    wanted: int | None = None
    for pb, b in enumerate(ordered_b):
        pa = in_a.get(b.item_id)
        if pa is None:
            continue
        pairs.add(pa, pb, next(iter(ordered_a.at([pa]))), b)
        if b.item_id == item:
            wanted = len(pairs.a) - 1
        elif item is None and not pairs.changed[-1]:
            unchanged.append(b.item_id)
    in_a.clear()
    if not pairs.a:
        raise ScoregateError(
            f"runs {store_a.run_id} and {store_b.run_id} share no item id", hint="diff two runs of the same dataset"
        )
    keys = list(pairs.keys)
    notes: list[str] = []
    runs = ((store_a.run_id, store_a.manifest_record.receipts), (store_b.run_id, store_b.manifest_record.receipts))
    if by is None:
        by = primary_score(runs[1][1], keys) or (keys[0] if keys else None)
    elif by not in keys:
        raise ScoregateError(
            f"unknown --by score {by!r}: not a numeric score of both runs", hint=f"one of: {', '.join(keys)}"
        )
    if item is not None:
        if wanted is None:
            shared = ", ".join(pairs.first_ids)
            raise ScoregateError(f"item {item!r} is not in both runs", hint=f"shared items: {shared}")
        selected = np.array([wanted], dtype=np.int64)
    else:
        selected = np.flatnonzero(np.frombuffer(bytes(pairs.changed), dtype=np.uint8))
    shown = pairs.order(selected, by)
    changed = int(sum(pairs.changed[int(i)] for i in selected))
    if limit is not None and len(shown) > limit:
        notes.append(f"showing the {limit} largest changes of {changed} changed items")
        shown = shown[:limit]
    by_unchanged = by is not None and not any(pairs.differs[by][int(i)] for i in shown)
    items = _diffs(ordered_a, ordered_b, [(pairs.a[int(i)], pairs.b[int(i)]) for i in shown], runs)
    return RunDiff(store_a.run_id, store_b.run_id, by, len(pairs.a), items, notes, changed, unchanged, by_unchanged)


def _diffs(
    ordered_a: OrderedItems, ordered_b: OrderedItems, shown: list[tuple[int, int]], runs: tuple[Labelled, Labelled]
) -> Iterator[ItemDiff]:
    """Read both records of each listed pair again and make its diff (word diff included), one at a time."""
    for pa, pb in shown:
        yield _item_diff(next(iter(ordered_a.at([pa]))), next(iter(ordered_b.at([pb]))), runs)
