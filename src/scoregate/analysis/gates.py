"""Gate verdicts: pass, fail, or incomplete (metric missing or coverage below the floor) — never a silent pass.

Below the coverage floor a gate still fails when the measured items already decide it: no score the
unmeasured items could get would make it pass (an `every_item` gate with a breaking item, a `min`
already under a `>=` threshold). It never passes below the floor.
"""

from __future__ import annotations

import math
import operator
import statistics
from collections.abc import Callable, Sequence
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
) -> GateResult:
    """Judge one gate against a run summary and the metric's per-item column (None = unmeasured).

    With `item_ids` (aligned with `column`), a failed `every_item` gate names the items that broke it.
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
        return _every_item(gate, result, list(column), item_ids, coverage, low_coverage)
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


def _every_item(
    gate: GateSpec,
    result: Callable[[GateStatus, float | None, float | None, str], GateResult],
    values: list[float | None],
    item_ids: Sequence[str] | None,
    coverage: float,
    low_coverage: str | None,
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
