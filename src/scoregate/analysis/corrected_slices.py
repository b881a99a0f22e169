"""Slice gates on the corrected paired difference of pass rates, Holm-adjusted across the slices.

The same family and step-down as the raw slice gate (`analysis.slices`, `paired.holm_intervals`): every slice with
at least `min_items` paired items is one hypothesis; its p-value (a two-sided z test of the corrected difference) is
Holm-adjusted, and its interval (`corrected_difference`) is computed at its Holm step-down level. A slice fails when
that interval shows it worse by more than the margin. The slices share one calibration set, so their intervals are
correlated; Holm holds under any dependence.
"""

from __future__ import annotations

from collections.abc import Sequence

from scoregate.analysis.corrected_difference import corrected_difference
from scoregate.analysis.corrected_estimators import CorrectedEstimate
from scoregate.analysis.paired import holm
from scoregate.analysis.slices import PairedItem, SliceResult, SliceStatus
from scoregate.analysis.verdicts import interval_verdict
from scoregate.catalog.models import Direction
from scoregate.support.lazy_stats import stats


def _p_value(estimate: CorrectedEstimate) -> float | None:
    se = estimate.details.get("se")
    if estimate.value is None or not se:
        return None  # no test: every difference 0 (or no estimate), outside the family as in the raw gate
    return float(2 * stats.norm.sf(abs(estimate.value) / se))


def corrected_slices(
    items: Sequence[PairedItem],
    fields: Sequence[str],
    cal_judge: Sequence[float | None],
    cal_human: Sequence[float | None],
    *,
    margin: float,
    direction: Direction = "higher",
    alpha: float = 0.05,
    min_items: int = 10,
) -> list[SliceResult]:
    """Return one result per slice of each field (fields in order, slices by value), Holm across the tested ones."""
    groups: dict[tuple[str, str], list[PairedItem]] = {}
    for field in fields:
        for value in sorted({item.slices[field] for item in items}):
            groups[(field, value)] = [item for item in items if item.slices[field] == value]
    tested = [key for key, members in groups.items() if len(members) >= min_items]

    def at(key: tuple[str, str], level: float) -> CorrectedEstimate:
        members = groups[key]
        return corrected_difference(
            [m.candidate for m in members], [m.reference for m in members], cal_judge, cal_human, confidence=level
        )

    first = {key: at(key, 1 - alpha) for key in tested}
    pvalues = [_p_value(first[key]) for key in tested]
    adjusted = dict(zip(tested, holm(pvalues), strict=True))
    family = sorted((i for i, p in enumerate(pvalues) if p is not None), key=lambda i: (pvalues[i], i))
    levels = {key: 1 - alpha for key in tested}
    stepping = True
    for k, i in enumerate(family):  # the step-down: relax the level while every earlier interval excluded 0
        key = tested[i]
        if stepping:
            levels[key] = 1 - alpha / (len(family) - k)
            first[key] = at(key, levels[key])
        low, high = first[key].ci_low, first[key].ci_high
        stepping = stepping and low is not None and high is not None and (low > 0 or high < 0)
    results = []
    for key, members in groups.items():
        field, value = key
        if key not in first:
            results.append(
                SliceResult(field, value, len(members), "too_small", None, None, None, None, None, None, margin)
            )
            continue
        e = first[key]
        gain_high = (
            None if e.ci_low is None or e.ci_high is None else (-e.ci_low if direction == "lower" else e.ci_high)
        )
        status: SliceStatus = "fail" if gain_high is not None and gain_high < -margin else "pass"
        verdict = interval_verdict(e.ci_low, e.ci_high, direction=direction, margin=margin)[0]
        results.append(
            SliceResult(
                field, value, e.n_run, status, verdict, e.value, e.ci_low, e.ci_high, levels[key], adjusted[key],
                margin,
            )
        )  # fmt: skip
    return results
