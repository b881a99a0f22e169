"""Per-item views of stored runs: item tables (worst, failed, gate breakers), one item in full, and run diffs.

These are library functions so the CLI (`scoregate runs show --items/--item`, `scoregate diff`) and the
HTML report read the same data. Nothing here calls a model or a sink.
"""

from __future__ import annotations

import difflib
import json
import operator
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from scoregate.analysis.columns import FloatColumn
from scoregate.analysis.run_source import RunSource, recorded_gates
from scoregate.catalog.directions import default_direction
from scoregate.errors import ScoregateError
from scoregate.store.records import ItemResult
from scoregate.support.figures import output_text

if TYPE_CHECKING:
    from scoregate.store.record import GateResult, Receipts

NUMERIC_TYPES = ("numeric", "boolean")
EXCERPT_CHARS = 80
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}  # fmt: skip


def excerpt(output: Any, chars: int = EXCERPT_CHARS) -> str:
    """Return the start of an output on one line (whitespace collapsed), ending in … when cut."""
    whole = output_text(output)
    start = " ".join(whole[: 4 * chars].split())  # collapsing a start gives the start of the collapsed whole
    text = start if len(start) > chars or len(whole) <= 4 * chars else " ".join(whole.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def numeric_scores(result: ItemResult) -> dict[str, float | None]:
    """Return the item's numeric and boolean scores (booleans as 1.0 / 0.0; None = not measured)."""
    out: dict[str, float | None] = {}
    for s in result.scores:
        if s.data_type in NUMERIC_TYPES:
            out[s.name] = None if s.value is None or isinstance(s.value, str) else float(s.value)
    return out


@dataclass(frozen=True)
class ItemRow:
    """One item of a run in a table: id, prompt@version, output excerpt, numeric scores, error."""

    item_id: str
    index: int
    prompt: str
    output_excerpt: str
    scores: dict[str, float | None]
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready fields (what `dataclasses.asdict` gives, without its deep copy)."""
        return {"item_id": self.item_id, "index": self.index, "prompt": self.prompt,
                "output_excerpt": self.output_excerpt, "scores": self.scores, "error": self.error}  # fmt: skip


@dataclass
class ItemTable:
    """The rows `runs show --items` prints, the score keys in column order, and what was selected.

    `rows` may be read once only: it streams from the run's results.jsonl, so the first rows print before the
    last is read, and `keys` grows as they are read (complete once `rows` is exhausted).
    """

    run_id: str
    keys: list[str]
    rows: Iterable[ItemRow]
    selection: str
    notes: list[str] = field(default_factory=list)
    empty: str = "no items"
    """What to say instead of a table when no row was selected (e.g. `no failed items`)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready); reads every row into memory (`write_json` streams instead)."""
        rows = [row.to_dict() for row in self.rows]
        return {"run_id": self.run_id, "keys": self.keys, "rows": rows, **self._tail()}

    def write_json(self, write: Callable[[str], object], *, page: int = 500) -> None:
        """Write the `to_dict` form as JSON, one row a line, `page` rows per `write` (`keys` after the rows, once
        complete): a reader gets the first rows before the last is read."""
        write(f'{{\n  "run_id": {json.dumps(self.run_id)},\n  "rows": [')
        dumps, lines, n = json.JSONEncoder(default=str).encode, [], 0
        for n, row in enumerate(self.rows, start=1):
            lines.append(("," if n > 1 else "") + "\n    " + dumps(row.to_dict()))
            if len(lines) == page:
                write("".join(lines))
                lines = []
        tail = json.dumps({"keys": self.keys, **self._tail()}, indent=2, default=str)
        write("".join(lines) + ("\n  ],\n" if n else "],\n") + tail[2:] + "\n")

    def _tail(self) -> dict[str, Any]:
        return {"selection": self.selection, "notes": self.notes, "empty": self.empty}


def _streamed_rows(results: Iterable[ItemResult], keys: list[str]) -> Iterator[ItemRow]:
    """Yield each result's row, adding the score keys it brings to `keys` (first-seen order)."""
    known = set(keys)
    for result in results:
        row = _row(result)
        for key in row.scores:
            if key not in known:
                known.add(key)
                keys.append(key)
        yield row


def _row(result: ItemResult) -> ItemRow:
    return ItemRow(
        result.item_id, result.index, result.prompt, excerpt(result.output), numeric_scores(result), result.error
    )


def primary_score(receipts: Receipts, keys: Sequence[str], booleans: Collection[str] = ()) -> str | None:
    """Return the first score the run's gates use among `keys`, skipping the `booleans` (scores stored as 0/1)
    when a gated number follows (a worst-K list sorted by 0/1 is all ties); None when no gate names one of `keys`.
    """
    gated = [str(g["metric"]) for g in recorded_gates(receipts) if g.get("metric") in keys]
    return next((m for m in gated if m not in booleans), gated[0] if gated else None)


def _direction(name: str, directions: Mapping[str, str] | None) -> str:
    return (directions or {}).get(name) or default_direction(name)


def _gate(store: RunSource, name: str) -> GateResult:
    summary = store.summary_record
    gates = {g.name: g for g in summary.gates} if summary else {}
    if name not in gates:
        raise ScoregateError(
            f"run {store.run_id} has no gate {name!r}", hint=f"its gates: {', '.join(gates) or 'none (no summary)'}"
        )
    return gates[name]


def gate_breakers(store: RunSource, gate_name: str) -> tuple[list[str], str]:
    """Return the ids of the items whose own value breaks a gate's rule, and a note saying what that means.

    For an `every_item` gate these are exactly the items that failed it; for a gate on a mean (or
    another statistic) they are the items whose value alone falls on the wrong side of the threshold.
    A regression gate compares runs, not items: use `scoregate diff` for it.
    """
    gate = _gate(store, gate_name)
    if gate.stat == "paired_noninferiority":
        raise ScoregateError(
            f"gate {gate_name} compares this run with a production run, not items with a threshold",
            hint="see which items changed with `scoregate diff BASELINE_RUN RUN --by " + str(gate.metric) + "`",
        )
    if gate.threshold is None or str(gate.op) not in _OPS:
        raise ScoregateError(
            f"gate {gate_name} of run {store.run_id} records no rule an item's value can break",
            hint="list the items that failed with `scoregate runs show RUN --failed`",
        )
    compare, threshold = _OPS[str(gate.op)], float(gate.threshold)
    metric = str(gate.metric)
    broke = []
    for result in store.iter_results():
        score = result.score(metric)
        if score is None or score.value is None or isinstance(score.value, str):
            continue
        if not compare(float(score.value), threshold):
            broke.append(result.item_id)
    rule = f"{gate.metric} {gate.op} {threshold:g}"
    if gate.stat == "every_item":
        note = f"{len(broke)} item(s) broke gate {gate_name} ({rule} on every item)"
    else:
        note = (
            f"{len(broke)} item(s) whose own value breaks {rule}; gate {gate_name} reads the "
            f"{gate.stat} over all items ({gate.status})"
        )
    return broke, note


def item_table(
    store: RunSource,
    *,
    worst: int | None = None,
    by: str | None = None,
    failed: bool = False,
    gate: str | None = None,
    directions: Mapping[str, str] | None = None,
) -> ItemTable:
    """Return a run's items as rows: all, the `worst` K by a score, the failed ones, or those breaking a gate.

    `by` defaults to the run's primary continuous metric (`primary_score`). Worst means lowest for
    a higher-is-better score and highest for a lower-is-better one; unmeasured items are left out of
    a worst-K list and counted in a note. Raise ScoregateError on an unknown score or gate.
    """
    results = store.ordered_results()
    keys: list[str] = []
    notes: list[str] = []
    selection, empty = "all items", f"run {store.run_id} has no items"
    wanted: set[str] | None = None
    if failed:
        selection = "items whose model call or output failed"
        empty = f"no failed items in run {store.run_id}: every item's model call and output succeeded"
    if gate is not None:
        ids, note = gate_breakers(store, gate)
        wanted = set(ids)
        selection, notes = f"items that broke gate {gate}", [note]
        empty = f"no item of run {store.run_id} broke gate {gate}" + (" among the failed items" if failed else "")

    def kept(result: ItemResult) -> bool:
        return (not failed or result.error is not None) and (wanted is None or result.item_id in wanted)

    if worst is None and by is None:  # dataset order: stream, nothing held but the current row
        rows = _streamed_rows((r for r in results if kept(r)), keys)
        return ItemTable(store.run_id, keys, rows, selection, notes, empty)
    receipts = store.manifest_record.receipts
    candidates = [by] if by is not None else [g.get("metric") for g in recorded_gates(receipts)]
    booleans: set[str] = set()
    positions, columns = _sort_columns(results, kept, keys, [str(c) for c in candidates if c], booleans)
    by = by or primary_score(receipts, keys, booleans)
    if by is None:
        raise ScoregateError("--worst needs a score to sort by", hint=f"pass --by, one of: {', '.join(keys)}")
    if by not in keys:
        raise ScoregateError(f"unknown --by score {by!r} in run {store.run_id}", hint=f"one of: {', '.join(keys)}")
    direction = _direction(by, directions)
    if direction == "none":
        notes.append(f"{by} has no direction: sorted from lowest to highest")
    values, measured = columns[by].arrays()
    if not measured.all():
        notes.append(f"{int((~measured).sum())} item(s) without a {by} value are left out")
    sign = -1.0 if direction == "lower" else 1.0
    order = np.flatnonzero(measured)[np.argsort(values[measured] * sign, kind="stable")]
    shown = order[:worst] if worst is not None else order
    rows = _streamed_rows(results.at([int(positions[i]) for i in shown]), list(keys))
    selection = f"{'worst ' + str(worst) if worst is not None else 'items'} by {by} ({direction} is better)"
    empty = f"no selected item of run {store.run_id} has a {by} value"
    return ItemTable(store.run_id, keys, rows, selection, notes, empty)


def _sort_columns(
    results: Iterable[ItemResult],
    kept: Callable[[ItemResult], bool],
    keys: list[str],
    wanted: list[str],
    booleans: set[str],
) -> tuple[array[int], dict[str, FloatColumn]]:
    """One pass over the selected items: their positions, every score key (into `keys`), the keys stored as 0/1
    booleans (into `booleans`) and the `wanted` scores."""
    positions: array[int] = array("q")
    columns = {name: FloatColumn() for name in wanted}
    known: set[str] = set()
    for position, result in enumerate(results):
        if not kept(result):
            continue
        positions.append(position)
        booleans.update(score.name for score in result.scores if score.data_type == "boolean")
        scores = numeric_scores(result)
        for key in scores:
            if key not in known:
                known.add(key)
                keys.append(key)
        for name, column in columns.items():
            column.append(scores.get(name))
    return positions, columns


FACT_GROUPS = (("both", "both"), ("expected", "only expected (missed)"), ("got", "only produced"))
"""A facts score's verdicts, in reading order, with their titles."""


def fact_groups(value: Any) -> list[dict[str, Any]] | None:
    """Read a stored facts score (`{"both"|"expected"|"got": [{subject, predicate, object}]}` as JSON text) into
    titled groups of `subject predicate object` lines; None when the value is not one."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        grouped = json.loads(value)
    except json.JSONDecodeError:
        return None
    if not isinstance(grouped, dict) or not grouped or not set(grouped) <= {v for v, _ in FACT_GROUPS}:
        return None
    groups = []
    for verdict, title in FACT_GROUPS:
        facts = grouped.get(verdict) or []
        if not isinstance(facts, list) or not all(isinstance(f, dict) for f in facts):
            return None
        parts = [[str(f.get(k) or "").strip() for k in ("subject", "predicate", "object")] for f in facts]
        lines = [" ".join(p for p in fact if p) for fact in parts]
        groups.append({"verdict": verdict, "title": title, "facts": [line for line in lines if line]})
    return groups


def item_detail(store: RunSource, item_id: str) -> dict[str, Any]:
    """Return one item in full: input, output, expected output, every score with its reason, every call;
    `fact_groups` holds each facts score (by name) read into groups by verdict."""
    for result in store.iter_results():
        if result.item_id == item_id:
            facts = {s.name: groups for s in result.scores if (groups := fact_groups(s.value)) is not None}
            return {"run_id": store.run_id, **result.to_json_dict(), "fact_groups": facts}
    ids = [r.item_id for r in store.iter_results()]
    close = difflib.get_close_matches(item_id, ids, n=3)
    raise ScoregateError(
        f"run {store.run_id} has no item {item_id!r}",
        hint=(f"did you mean {', '.join(close)}? " if close else "")
        + f"list them with `scoregate runs show {store.run_id} --items`",
    )


def word_diff(a: str, b: str) -> str:
    """Return a word-level diff of two texts, git-style: `[-removed-]` and `{+added+}`, the rest as is."""
    wa, wb = a.split(), b.split()
    parts: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(" ".join(wa[i1:i2]))
            continue
        if op in ("delete", "replace"):
            parts.append("[-" + " ".join(wa[i1:i2]) + "-]")
        if op in ("insert", "replace"):
            parts.append("{+" + " ".join(wb[j1:j2]) + "+}")
    return " ".join(parts)
