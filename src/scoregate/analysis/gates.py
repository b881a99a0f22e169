"""Gate verdicts: pass, fail, or incomplete (metric missing or coverage below the floor) — never a silent pass.

Below the coverage floor a gate still fails when the measured items already decide it: no score the
unmeasured items could get would make it pass (an `every_item` gate with a breaking item, a `min`
already under a `>=` threshold). It never passes below the floor.

Flaky items kept out of an `every_item` gate (`quarantined`) count as unmeasured: they lower its coverage, so
a gate hollowed out by its quarantine is incomplete, and a gate that passes with items kept out says so
(`GateResult.verdict_words`: `pass on 9 of 10, 1 quarantined`).
"""

from __future__ import annotations

import math
import operator
import statistics
from collections.abc import Callable, Collection, Sequence
from typing import Any

from scoregate.catalog.config_models import GateSpec
from scoregate.store.record import GateResult, GateStatus

SHOWN_ITEMS = 5
"""How many breaking item ids a gate's detail names (the count is always given)."""

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


def holds(op: str, value: float, threshold: float) -> bool:
    """True when `value op threshold` (a gate's rule) holds."""
    return _OPS[op](value, threshold)


def new_gate_result(
    name: str,
    metric: str,
    stat: str,
    op: str,
    threshold: float,
    observed: float | None,
    coverage: float | None,
    status: GateStatus,
    detail: str,
) -> GateResult:
    """A gate's verdict as the run record keeps it: every field written (the optional lists as null)."""
    return GateResult(
        name=name,
        metric=metric,
        stat=stat,
        op=op,
        threshold=threshold,
        observed=observed,
        coverage=coverage,
        status=status,
        detail=detail,
        failing_items=None,
        quarantined=None,
        slices=None,
    )


def evaluate_gate(
    gate: GateSpec,
    summary: dict[str, Any],
    *,
    column: Sequence[float | None] | None,
    min_coverage: float,
    item_ids: Sequence[str] | None = None,
    quarantined: Collection[str] = (),
    quarantine_hint: str = "",
) -> GateResult:
    """Judge one gate against a run summary and the metric's per-item column (None = unmeasured).

    With `item_ids` (aligned with `column`), a failed `every_item` gate names the items that broke it, and the
    `quarantined` items (flaky) are kept out of it as unmeasured; `quarantine_hint` follows their ids in the detail.
    """
    floor = gate.min_coverage if gate.min_coverage is not None else min_coverage
    compare = _OPS[gate.op]

    def result(status: GateStatus, observed: float | None, coverage: float | None, detail: str) -> GateResult:
        return new_gate_result(
            gate.name, gate.metric, gate.stat, gate.op, gate.threshold, observed, coverage, status, detail
        )

    stats = summary["scores"].get(gate.metric)
    if stats is None:
        observed = summary["run_metrics"].get(gate.metric)
        if observed is None:
            return result("incomplete", None, None, f"{gate.metric} was not measured in this run")
        ok = compare(float(observed), gate.threshold)
        return result("pass" if ok else "fail", float(observed), None, f"{gate.metric} = {observed:g}")
    coverage = stats.get("coverage")
    if not coverage:
        return result("incomplete", None, coverage, f"{gate.metric} has no measured value")
    low_coverage = f"coverage {coverage:.0%} is below the floor {floor:.0%}" if coverage < floor else None
    if gate.stat == "every_item":
        if column is None:  # a run-level value (a track's micro metric) has no items to check one by one
            return result("incomplete", None, coverage, f"{gate.metric} has no per-item values to check")
        kept = _Quarantine.of(gate, column, item_ids, quarantined)
        if kept is None:
            return _every_item(gate, result, list(column), item_ids, coverage, low_coverage)
        coverage = kept.coverage
        low_coverage = f"coverage {coverage:.0%} is below the floor {floor:.0%}" if coverage < floor else None
        judged = _every_item(gate, result, kept.column, item_ids, coverage, low_coverage, kept.note(quarantine_hint))
        return judged.model_copy(update=kept.fields())
    observed = stats.get(gate.stat)
    if low_coverage:
        span = _possible_span(gate.stat, stats, column)
        if observed is not None and span is not None and not _can_hold(gate.op, span, gate.threshold):
            rule = f"{gate.op} {gate.threshold:g}"
            detail = f"{gate.stat} = {observed:.4g} breaks {rule} whatever the unmeasured items score; {low_coverage}"
            return result("fail", float(observed), coverage, detail)
        return result("incomplete", None if observed is None else float(observed), coverage, low_coverage)
    if observed is None:
        return result("incomplete", None, coverage, f"{gate.stat} of {gate.metric} is undefined for this data")
    ok = compare(float(observed), gate.threshold)
    return result("pass" if ok else "fail", float(observed), coverage, f"{gate.stat} = {observed:.4g}")


class _Quarantine:
    """The flaky items kept out of an `every_item` gate: the column with them unmeasured, and what that changed."""

    def __init__(self, gate: GateSpec, values: list[float | None], ids: list[str], kept: list[int]) -> None:
        compare, held = _OPS[gate.op], set(kept)
        self.ids = [ids[i] for i in kept]
        self.breaking = [ids[i] for i in kept if (v := values[i]) is not None and not compare(v, gate.threshold)]
        self.column: list[float | None] = [None if i in held else v for i, v in enumerate(values)]
        self.gated = sum(v is not None for v in self.column)
        self.total = len(values)
        self.coverage = self.gated / self.total

    @classmethod
    def of(
        cls, gate: GateSpec, column: Sequence[float | None], item_ids: Sequence[str] | None, kept: Collection[str]
    ) -> _Quarantine | None:
        """The quarantine of the items of `kept` this run holds, or None when it holds none."""
        if not kept or item_ids is None or len(item_ids) != len(column):
            return None
        found = [i for i, item_id in enumerate(item_ids) if item_id in kept]
        return cls(gate, list(column), list(item_ids), found) if found else None

    def note(self, hint: str) -> str:
        """`1 flaky item kept out: a (hint), which breaks the rule in this run`."""
        more = f", … (+{len(self.ids) - SHOWN_ITEMS} more)" if len(self.ids) > SHOWN_ITEMS else ""
        count = f"{len(self.ids)} flaky item{'s' if len(self.ids) != 1 else ''}"
        text = f"{count} kept out: {', '.join(self.ids[:SHOWN_ITEMS])}{more}" + (f" ({hint})" if hint else "")
        if len(self.breaking) == 1 and len(self.ids) == 1:
            text += ", which breaks the rule in this run"
        elif self.breaking:
            verb = "breaks" if len(self.breaking) == 1 else "break"
            text += f", {len(self.breaking)} of which {verb} the rule in this run"
        return text

    def fields(self) -> dict[str, object]:
        """The GateResult fields that record the quarantine."""
        return {
            "quarantined": self.ids, "quarantined_breaking": self.breaking, "gated_items": self.gated,
            "total_items": self.total,
        }  # fmt: skip


def _every_item(
    gate: GateSpec,
    result: Callable[[GateStatus, float | None, float | None, str], GateResult],
    values: list[float | None],
    item_ids: Sequence[str] | None,
    coverage: float,
    low_coverage: str | None,
    kept_out: str = "",
) -> GateResult:
    """Fail on any measured item breaking the rule (whatever the coverage); else pass, or incomplete below the floor.

    `observed` is the worst measured value: the lowest for `>=`/`>`, else the highest.
    """
    compare = _OPS[gate.op]
    ids = list(item_ids) if item_ids is not None and len(item_ids) == len(values) else None
    measured = [v for v in values if v is not None]
    broke = [i for i, v in enumerate(values) if v is not None and not compare(v, gate.threshold)]
    worst = (min if gate.op in (">=", ">") else max)(measured) if measured else None
    items = "items" if coverage >= 1 else "measured items"
    detail = f"{len(broke)} of {len(measured)} {items} break {gate.op} {gate.threshold:g}"
    named = [ids[i] for i in broke] if ids is not None else None
    if named:
        more = f", … (+{len(named) - SHOWN_ITEMS} more)" if len(named) > SHOWN_ITEMS else ""
        detail += f": {', '.join(named[:SHOWN_ITEMS])}{more}"
    if kept_out:
        detail += f"; {kept_out}"
    if low_coverage:
        detail += f"; {low_coverage}"
    elif coverage < 1:
        detail += f"; coverage {coverage:.0%}"
    status: GateStatus = "fail" if broke else "incomplete" if low_coverage else "pass"
    return result(status, worst, coverage, detail).model_copy(update={"failing_items": named})


def _possible_span(
    stat: str, stats: dict[str, Any], column: Sequence[float | None] | None
) -> tuple[float, float] | None:
    """Return the range the statistic over all items could take, whatever the unmeasured ones score (None: any)."""
    if stat == "min" and stats.get("min") is not None:
        return -math.inf, float(stats["min"])
    if stat == "max" and stats.get("max") is not None:
        return float(stats["max"]), math.inf
    if stat == "median" and column is not None:
        measured = [float(v) for v in column if v is not None]
        missing = len(column) - len(measured)
        if measured:  # the unmeasured items all lowest, then all highest
            low = statistics.median([-math.inf] * missing + measured)
            return low, statistics.median(measured + [math.inf] * missing)
    return None  # a mean or a CI can still land anywhere while items are unmeasured


def _can_hold(op: str, span: tuple[float, float], threshold: float) -> bool:
    """True when some value in the closed range `span` meets `op threshold`."""
    low, high = span
    if op in (">=", ">"):
        return _OPS[op](high, threshold)
    if op in ("<=", "<"):
        return _OPS[op](low, threshold)
    return low <= threshold <= high


def overall_verdict(results: Sequence[GateResult]) -> str:
    """Return `pass` when every gate passed, `fail` when any failed, else `incomplete` (`no_gates` if none)."""
    if not results:
        return "no_gates"
    statuses = {r.status for r in results}
    if "fail" in statuses:
        return "fail"
    return "incomplete" if "incomplete" in statuses else "pass"
