"""Slice gates on the corrected paired difference: each slice's corrected Δ, Holm across the slices."""

from __future__ import annotations

import pytest

from scoregate.analysis.corrected_difference import corrected_difference
from scoregate.analysis.corrected_slices import corrected_slices
from scoregate.analysis.slices import PairedItem

CAL_HUMAN = [0.0] * 50 + [1.0] * 50
CAL_JUDGE = [0.0] * 35 + [1.0] * 15 + [1.0] * 45 + [0.0] * 5  # q0 = 0.7, q1 = 0.9


def _slice(feed: str, n: int, reference_passes: int, candidate_passes: int) -> list[PairedItem]:
    return [PairedItem({"feed": feed}, float(i < reference_passes), float(i < candidate_passes)) for i in range(n)]


def test_a_slice_whose_corrected_loss_is_beyond_the_margin_fails_and_the_others_pass() -> None:
    # security: the judge sees 0.50 → 0.35 on 200 items (corrected −0.25); devtools: 50 items flip each way, no
    # change; tiny: 5 items.
    devtools = [PairedItem({"feed": "devtools"}, float(i < 100), float(50 <= i < 150)) for i in range(200)]
    items = _slice("security", 200, 100, 70) + devtools + _slice("tiny", 5, 3, 0)
    results = {r.name: r for r in corrected_slices(items, ["feed"], CAL_JUDGE, CAL_HUMAN, margin=0.1, min_items=10)}

    security, unchanged, tiny = results["feed=security"], results["feed=devtools"], results["feed=tiny"]
    assert security.status == "fail" and security.diff == pytest.approx(-0.15 / 0.6)
    assert unchanged.status == "pass" and unchanged.diff == pytest.approx(0.0)
    assert tiny.status == "too_small" and tiny.diff is None
    # Holm over the two tested slices: the smaller p (security) at 1 − 0.05/2, then devtools at 1 − 0.05/1
    # only if security's interval excluded 0 (it does).
    assert security.ci_level == pytest.approx(0.975) and unchanged.ci_level == pytest.approx(0.95)
    wide = corrected_difference(
        [i.candidate for i in items[:200]], [i.reference for i in items[:200]], CAL_JUDGE, CAL_HUMAN, confidence=0.975
    )
    assert (security.ci_low, security.ci_high) == pytest.approx((wide.ci_low, wide.ci_high))
    assert security.p_holm is not None and security.p_holm < 0.001 and unchanged.p_holm == pytest.approx(1.0)
