"""Gate verdicts: pass, fail, or incomplete (metric missing or coverage below the floor) — never a silent pass."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from scoregate.catalog.models import GateSpec

GateStatus = Literal["pass", "fail", "incomplete"]
SHOWN_ITEMS = 5
"""How many breaking item ids a gate's detail names (the count is always given)."""

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict with the evidence behind it."""

    name: str
    metric: str
    stat: str
    op: str
    threshold: float
    observed: float | None
    coverage: float | None
    status: GateStatus
    detail: str
    failing_items: list[str] | None = None
    """For an `every_item` gate: the ids of the items that broke it (all of them, in dataset order)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form."""
        return asdict(self)


def evaluate_gate(
    gate: GateSpec,
    summary: dict[str, Any],
    *,
    column: Sequence[float | None] | None,
    min_coverage: float,
    item_ids: Sequence[str] | None = None,
) -> GateResult:
    """Judge one gate against a run summary (and the metric's per-item column, for `every_item`).

    With `item_ids` (aligned with `column`), a failed `every_item` gate names the items that broke it.
    """
    floor = gate.min_coverage if gate.min_coverage is not None else min_coverage
    compare = _OPS[gate.op]

    def result(status: GateStatus, observed: float | None, coverage: float | None, detail: str) -> GateResult:
        return GateResult(
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
    if coverage < floor:
        return result(
            "incomplete", stats.get(gate.stat if gate.stat != "every_item" else "mean"), coverage,
            f"coverage {coverage:.0%} is below the floor {floor:.0%}",
        )  # fmt: skip
    if gate.stat == "every_item":
        values = list(column or [])
        ids = list(item_ids) if item_ids is not None and len(item_ids) == len(values) else None
        measured = [v for v in values if v is not None]
        broke = [i for i, v in enumerate(values) if v is not None and not compare(v, gate.threshold)]
        failing = len(broke)
        worst = (min if gate.op in (">=", ">") else max)(measured) if measured else None
        status: GateStatus = "pass" if failing == 0 else "fail"
        detail = f"{failing} of {len(measured)} items break {gate.op} {gate.threshold:g}"
        named = [ids[i] for i in broke] if ids is not None else None
        if named:
            shown = ", ".join(named[:SHOWN_ITEMS]) + (
                f", … (+{failing - SHOWN_ITEMS} more)" if failing > SHOWN_ITEMS else ""
            )
            detail += f": {shown}"
        return replace(result(status, worst, coverage, detail), failing_items=named)
    observed = stats.get(gate.stat)
    if observed is None:
        return result("incomplete", None, coverage, f"{gate.stat} of {gate.metric} is undefined for this data")
    ok = compare(float(observed), gate.threshold)
    return result("pass" if ok else "fail", float(observed), coverage, f"{gate.stat} = {observed:.4g}")


def overall_verdict(results: Sequence[GateResult]) -> str:
    """Return `pass` when every gate passed, `fail` when any failed, else `incomplete` (`no_gates` if none)."""
    if not results:
        return "no_gates"
    statuses = {r.status for r in results}
    if "fail" in statuses:
        return "fail"
    return "incomplete" if "incomplete" in statuses else "pass"
