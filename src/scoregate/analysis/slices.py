"""Slice gates: the paired comparison with the reference run made per slice, Holm-adjusted across slices.

Every slice of every field (`feed_category=devtools`, `episode_kind=interview`, ...) that has at least
`min_items` items measured in both runs is one hypothesis of a single Holm family, compared as
`scoregate compare` compares a secondary score (`compare_many`): its Wilcoxon p-value Holm-adjusted and its
paired-bootstrap CI of the difference widened to its Holm step-down level. A slice *fails* when that
interval shows it worse by more than the gate's margin (the gain's upper bound below −margin); any other
tested slice passes (no loss beyond the margin shown). A smaller slice is *too small*: not tested, so
neither passed nor failed, and it is named in the gate's detail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the mirrors read slice rows through this module: it must not load numpy or the catalog
    from scoregate.analysis.gates import GateResult
    from scoregate.catalog.models import Direction

SliceStatus = Literal["pass", "fail", "too_small"]
SHOWN_SLICES = 5
"""How many failing or too-small slices a gate's detail names (the count is always given)."""


@dataclass(frozen=True)
class PairedItem:
    """One item measured in both runs: its slice per field, the reference's value and the candidate's."""

    slices: Mapping[str, str]
    reference: float
    candidate: float


@dataclass(frozen=True)
class SliceResult:
    """One slice's comparison (differences are candidate − reference); statistics are None when too small."""

    field: str
    value: str
    n: int
    status: SliceStatus
    verdict: str | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    ci_level: float | None
    p_holm: float | None
    margin: float

    @property
    def name(self) -> str:
        """`field=value`."""
        return f"{self.field}={self.value}"

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def compare_slices(
    items: Sequence[PairedItem],
    fields: Sequence[str],
    *,
    margin: float,
    direction: Direction = "higher",
    alpha: float = 0.05,
    min_items: int = 10,
    resamples: int = 2000,
    seed: int = 0,
) -> list[SliceResult]:
    """Return one result per slice of each field (fields in order, slices by value), Holm across the tested ones."""
    from scoregate.analysis.paired import compare_many

    groups: dict[tuple[str, str], list[PairedItem]] = {}
    for field in fields:
        for value in sorted({item.slices[field] for item in items}):
            groups[(field, value)] = [item for item in items if item.slices[field] == value]
    tested = {f"{f}={v}": members for (f, v), members in groups.items() if len(members) >= min_items}
    pairs = {name: ([m.reference for m in ms], [m.candidate for m in ms]) for name, ms in tested.items()}
    compared = compare_many(
        pairs, primary=(), margins={name: margin for name in pairs}, directions=direction,
        alpha=alpha, resamples=resamples, seed=seed,
    ) if pairs else {}  # fmt: skip
    results = []
    for (field, value), members in groups.items():
        c = compared.get(f"{field}={value}")
        if c is None:
            results.append(
                SliceResult(field, value, len(members), "too_small", None, None, None, None, None, None, margin)
            )
            continue
        gain_high = None
        if c.diff_ci_low is not None and c.diff_ci_high is not None:
            gain_high = -c.diff_ci_low if direction == "lower" else c.diff_ci_high
        status: SliceStatus = "fail" if gain_high is not None and gain_high < -margin else "pass"
        results.append(
            SliceResult(
                field, value, c.n, status, c.verdict, c.diff, c.diff_ci_low, c.diff_ci_high, c.ci_level,
                c.p_adjusted, margin,
            )
        )  # fmt: skip
    return results


def _named(results: list[SliceResult], what: str) -> str:
    names = [f"{r.name} (n={r.n})" for r in results]
    more = f", … (+{len(names) - SHOWN_SLICES} more)" if len(names) > SHOWN_SLICES else ""
    return f"{len(results)} slice{'s' if len(results) != 1 else ''} {what}: {', '.join(names[:SHOWN_SLICES])}{more}"


def with_slices(overall: GateResult, slices: list[SliceResult], *, min_items: int) -> GateResult:
    """Return the regression gate's result with its slice table: it fails when any tested slice failed."""
    failed = [s for s in slices if s.status == "fail"]
    small = [s for s in slices if s.status == "too_small"]
    tested = len(slices) - len(small)
    parts = [f"{tested} slice{'s' if tested != 1 else ''} tested (Holm across them)"]
    if failed:
        parts.append(_named(failed, f"worse by more than the margin {failed[0].margin:g}"))
    if small:
        parts.append(_named(small, f"too small to test (< {min_items} paired items)"))
    detail = f"{overall.detail}; " + "; ".join(parts)
    status = "fail" if failed else overall.status
    from scoregate.store.sections import SliceRow  # pydantic: only once a slice gate is judged

    rows = [SliceRow.model_validate(s.to_dict()) for s in slices]
    return overall.model_copy(update={"status": status, "detail": detail, "slices": rows})


_UNSAFE = re.compile(r"[^\w.\- /]")


def slice_metric_prefix(gate: str, row: Mapping[str, Any]) -> str:
    """`slice.<gate>.<field>.<value>` with characters MLflow refuses in a metric name replaced by `_`."""
    return _UNSAFE.sub("_", f"slice.{gate}.{row['field']}.{row['value']}")


def slice_metrics(gates: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Per slice of each slice gate: `<prefix>.n`, `.diff`, `.ci_low`, `.ci_high`, `.p_holm` and `.pass`
    (1 pass, 0 fail, None too small); see `slice_metric_prefix`."""
    metrics: dict[str, float | None] = {}
    for gate in gates:
        for row in gate.get("slices") or []:
            prefix = slice_metric_prefix(str(gate["name"]), row)
            metrics[f"{prefix}.n"] = float(row["n"])
            for key in ("diff", "ci_low", "ci_high", "p_holm"):
                metrics[f"{prefix}.{key}"] = row[key]
            metrics[f"{prefix}.pass"] = None if row["status"] == "too_small" else float(row["status"] == "pass")
    return metrics


def slice_score_rows(gates: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Per slice of each slice gate: (score name `slice.<gate>.<field>=<value>`, status, comment, metadata)."""
    rows = []
    for gate in gates:
        for row in gate.get("slices") or []:
            name = f"slice.{gate['name']}.{row['field']}={row['value']}"
            ci = "" if row["ci_low"] is None else f", Holm CI [{row['ci_low']:+.3g}, {row['ci_high']:+.3g}]"
            comment = (
                f"n={row['n']}, {row['verdict'] or 'not tested'}"
                + ("" if row["diff"] is None else f", Δ {row['diff']:+.3g}")
                + ci
            )
            meta = {k: row[k] for k in ("n", "diff", "ci_low", "ci_high", "ci_level", "p_holm", "margin")}
            rows.append((name, str(row["status"]), comment, meta))
    return rows
