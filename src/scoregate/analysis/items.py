"""Per-item views of stored runs: item tables (worst, failed, gate breakers), one item in full, and run diffs.

These are library functions so the CLI (`scoregate runs show --items/--item`, `scoregate diff`) and the
HTML report read the same data. Nothing here calls a model or a sink.
"""

from __future__ import annotations

import difflib
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from scoregate.catalog.directions import default_direction
from scoregate.errors import ScoregateError
from scoregate.records import ItemResult
from scoregate.store import RunStore

NUMERIC_TYPES = ("numeric", "boolean")
EXCERPT_CHARS = 80
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}  # fmt: skip


def output_text(output: Any) -> str:
    """Return an output as text: strings as they are, anything else as indented JSON."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return json.dumps(output, indent=2, ensure_ascii=False, default=str)


def excerpt(output: Any, chars: int = EXCERPT_CHARS) -> str:
    """Return the start of an output on one line (whitespace collapsed), ending in … when cut."""
    text = " ".join(output_text(output).split())
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


@dataclass
class ItemTable:
    """The rows `runs show --items` prints, the score keys in column order, and what was selected."""

    run_id: str
    keys: list[str]
    rows: list[ItemRow]
    selection: str
    notes: list[str] = field(default_factory=list)
    empty: str = "no items"
    """What to say instead of a table when no row was selected (e.g. `no failed items`)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def _results(store: RunStore) -> list[ItemResult]:
    return sorted(store.iter_results(), key=lambda r: r.index)


def _row(result: ItemResult) -> ItemRow:
    return ItemRow(
        result.item_id, result.index, result.prompt, excerpt(result.output), numeric_scores(result), result.error
    )


def primary_score(store: RunStore, keys: Sequence[str], results: Sequence[ItemResult] = ()) -> str | None:
    """Return the first score the run's gates use among `keys`, skipping those `results` hold as 0/1 booleans
    when a gated number follows (a worst-K list sorted by 0/1 is all ties); None when no gate names one of `keys`.
    """
    gated = [str(g["metric"]) for g in store.manifest.get("receipts", {}).get("gates") or [] if g.get("metric") in keys]
    booleans = {s.name for r in results for s in r.scores if s.data_type == "boolean"}
    return next((m for m in gated if m not in booleans), gated[0] if gated else None)


def _direction(name: str, directions: Mapping[str, str] | None) -> str:
    return (directions or {}).get(name) or default_direction(name)


def _gate(store: RunStore, name: str) -> dict[str, Any]:
    summary = store.summary or {}
    gates = {str(g["name"]): g for g in summary.get("gates") or []}
    if name not in gates:
        raise ScoregateError(
            f"run {store.run_id} has no gate {name!r}", hint=f"its gates: {', '.join(gates) or 'none (no summary)'}"
        )
    return gates[name]


def gate_breakers(store: RunStore, gate_name: str) -> tuple[list[str], str]:
    """Return the ids of the items whose own value breaks a gate's rule, and a note saying what that means.

    For an `every_item` gate these are exactly the items that failed it; for a gate on a mean (or
    another statistic) they are the items whose value alone falls on the wrong side of the threshold.
    A regression gate compares runs, not items: use `scoregate diff` for it.
    """
    gate = _gate(store, gate_name)
    if gate.get("stat") == "paired_noninferiority":
        raise ScoregateError(
            f"gate {gate_name} compares this run with a production run, not items with a threshold",
            hint="see which items changed with `scoregate diff BASELINE_RUN RUN --by " + str(gate["metric"]) + "`",
        )
    compare = _OPS[str(gate["op"])]
    threshold = float(gate["threshold"])
    broke = []
    for result in _results(store):
        score = result.score(str(gate["metric"]))
        if score is None or score.value is None or isinstance(score.value, str):
            continue
        if not compare(float(score.value), threshold):
            broke.append(result.item_id)
    rule = f"{gate['metric']} {gate['op']} {threshold:g}"
    if gate.get("stat") == "every_item":
        note = f"{len(broke)} item(s) broke gate {gate_name} ({rule} on every item)"
    else:
        note = (
            f"{len(broke)} item(s) whose own value breaks {rule}; gate {gate_name} reads the "
            f"{gate.get('stat')} over all items ({gate['status']})"
        )
    return broke, note


def item_table(
    store: RunStore,
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
    results = _results(store)
    keys = list(dict.fromkeys(k for r in results for k in numeric_scores(r)))
    rows = [_row(r) for r in results]
    notes: list[str] = []
    selection, empty = "all items", f"run {store.run_id} has no items"
    if failed:
        rows = [r for r in rows if r.error is not None]
        selection = "items whose model call or output failed"
        empty = f"no failed items in run {store.run_id}: every item's model call and output succeeded"
    if gate is not None:
        ids, note = gate_breakers(store, gate)
        wanted = set(ids)
        rows = [r for r in rows if r.item_id in wanted]
        selection, notes = f"items that broke gate {gate}", [note]
        empty = f"no item of run {store.run_id} broke gate {gate}" + (" among the failed items" if failed else "")
    if worst is not None or by is not None:
        by = by or primary_score(store, keys, results)
        if by is None:
            raise ScoregateError("--worst needs a score to sort by", hint=f"pass --by, one of: {', '.join(keys)}")
        if by not in keys:
            raise ScoregateError(f"unknown --by score {by!r} in run {store.run_id}", hint=f"one of: {', '.join(keys)}")
        direction = _direction(by, directions)
        if direction == "none":
            notes.append(f"{by} has no direction: sorted from lowest to highest")
        measured = [r for r in rows if r.scores.get(by) is not None]
        if len(measured) < len(rows):
            notes.append(f"{len(rows) - len(measured)} item(s) without a {by} value are left out")
        measured.sort(key=lambda r: (r.scores[by] or 0.0) * (-1 if direction == "lower" else 1))
        rows = measured[:worst] if worst is not None else measured
        selection = f"{'worst ' + str(worst) if worst is not None else 'items'} by {by} ({direction} is better)"
        empty = f"no selected item of run {store.run_id} has a {by} value"
    return ItemTable(store.run_id, keys, rows, selection, notes, empty)


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


def item_detail(store: RunStore, item_id: str) -> dict[str, Any]:
    """Return one item in full: input, output, expected output, every score with its reason, every call;
    `fact_groups` holds each facts score (by name) read into groups by verdict."""
    for result in store.iter_results():
        if result.item_id == item_id:
            facts = {s.name: groups for s in result.scores if (groups := fact_groups(s.value)) is not None}
            return {"run_id": store.run_id, **result.to_json_dict(), "fact_groups": facts}
    ids = [r.item_id for r in _results(store)]
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


@dataclass
class RunDiff:
    """Run B against run A item by item, sorted by the largest change of `by`."""

    run_a: str
    run_b: str
    by: str | None
    shared_items: int
    items: list[ItemDiff]
    notes: list[str] = field(default_factory=list)
    changed: int = 0
    """Shared items whose scores, output or error differ (all of them are in `items` unless --limit cut)."""
    unchanged: list[str] = field(default_factory=list)
    """Ids of the shared items with the same scores, output and error in both runs (not listed as changes)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def _item_diff(a: ItemResult, b: ItemResult) -> ItemDiff:
    sa, sb = numeric_scores(a), numeric_scores(b)
    deltas: dict[str, float | None] = {}
    for key in sa:
        if key in sb:
            x, y = sa[key], sb[key]
            deltas[key] = None if x is None or y is None else y - x
    ta, tb = output_text(a.output), output_text(b.output)
    return ItemDiff(a.item_id, a.prompt, b.prompt, ta, tb, word_diff(ta, tb), sa, sb, deltas, a.error, b.error)


def diff_runs(
    store_a: RunStore, store_b: RunStore, *, by: str | None = None, item: str | None = None, limit: int | None = None
) -> RunDiff:
    """Return the items both runs share, sorted by the largest |Δ| of `by` (default: the primary metric).

    Items with the same scores, output and error in both runs are not changes: only their ids are kept
    (`unchanged`). Items where `by` is unmeasured on one side come after those where it changed, then the
    items where only other scores or the output changed. `item` keeps only that item (changed or not).
    Raise ScoregateError when the runs share no item, or `by` / `item` is unknown.
    """
    results_a = {r.item_id: r for r in _results(store_a)}
    results_b = _results(store_b)
    pairs = [(results_a[b.item_id], b) for b in results_b if b.item_id in results_a]
    if not pairs:
        raise ScoregateError(
            f"runs {store_a.run_id} and {store_b.run_id} share no item id", hint="diff two runs of the same dataset"
        )
    diffs = [_item_diff(a, b) for a, b in pairs]
    keys = list(dict.fromkeys(k for d in diffs for k in d.deltas))
    notes: list[str] = []
    if by is None:
        by = primary_score(store_b, keys) or (keys[0] if keys else None)
    elif by not in keys:
        raise ScoregateError(
            f"unknown --by score {by!r}: not a numeric score of both runs", hint=f"one of: {', '.join(keys)}"
        )
    if item is not None:
        diffs = [d for d in diffs if d.item_id == item]
        if not diffs:
            raise ScoregateError(
                f"item {item!r} is not in both runs", hint=f"shared items: {', '.join(d.item_id for d in _head(pairs))}"
            )
    unchanged = [] if item is not None else [d.item_id for d in diffs if not _changed(d)]
    diffs = [d for d in diffs if item is not None or _changed(d)]
    if by is not None:
        diffs.sort(key=lambda d: _change_order(d, by))
    changed = sum(_changed(d) for d in diffs)
    if limit is not None and len(diffs) > limit:
        notes.append(f"showing the {limit} largest changes of {changed} changed items")
        diffs = diffs[:limit]
    return RunDiff(store_a.run_id, store_b.run_id, by, len(pairs), diffs, notes, changed, unchanged)


def _changed_scores(d: ItemDiff) -> int:
    """How many scores differ (a value on one side and none on the other counts)."""
    return sum(d.scores_a.get(k) != d.scores_b.get(k) for k in d.deltas)


def _changed(d: ItemDiff) -> bool:
    """True when the item's scores, output or error differ between the two runs."""
    return _changed_scores(d) > 0 or d.output_a != d.output_b or d.error_a != d.error_b


def _change_order(d: ItemDiff, by: str) -> tuple[int, float, int]:
    """Largest |Δ by| first; then `by` measured on one side only; then items where only other things changed."""
    delta = d.deltas.get(by)
    if delta:
        group = 0
    elif d.scores_a.get(by) != d.scores_b.get(by):
        group = 1
    else:
        group = 2
    return group, -abs(delta or 0.0), -_changed_scores(d)


def _head(pairs: Iterable[tuple[ItemResult, ItemResult]], n: int = 10) -> list[ItemResult]:
    out = []
    for _, b in pairs:
        out.append(b)
        if len(out) == n:
            break
    return out
