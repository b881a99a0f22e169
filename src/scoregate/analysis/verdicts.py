"""The verdict rule: the word printed beside a CI of a difference is read from that CI, and nothing else.

No scipy here, so the CLI and the report can import the rule and its words cheaply.
"""

from __future__ import annotations

from typing import Literal

from scoregate.catalog.models import Direction

Verdict = Literal[
    "better",
    "worse",
    "equivalent",
    "non-inferior",
    "inconclusive",
    "increased",
    "decreased",
    "no change",
    "cannot compare",
]
WILCOXON_VARIANT = "Wilcoxon signed-rank, two-sided, zero differences kept in the ranking (Pratt)"
VERDICT_RULE = (
    "A primary metric's verdict follows the printed paired-bootstrap CI of the difference: no change when it "
    "is exactly [0, 0] (every item scored the same in both runs), better or worse when it excludes 0 on that "
    "side, equivalent when it lies within ±margin, non-inferior when its worse end stays above −margin, "
    "else inconclusive (with the smallest difference the sample could detect); cannot compare when there is no "
    "CI (fewer than 2 items measured in both runs). "
    "Every other score is secondary and exploratory: its p-value and its CI are Holm-adjusted across the "
    "secondary scores (the CI is wider), and its word follows that adjusted CI the same way."
)
"""The verdict rule in words (docs/results/compare.md says the same)."""


def interval_verdict(
    low: float | None, high: float | None, *, direction: Direction = "higher", margin: float | None = None
) -> tuple[Verdict, bool | None]:
    """Return (verdict, non_inferior) read from a CI of the difference b − a, and nothing else.

    With gain = b − a (higher is better) or a − b (lower is better) and its CI [gl, gh]: "better" when
    gl > 0, "worse" when gh < 0, "no change" when the CI is exactly [0, 0] (every paired difference is
    0), else with a margin m: "equivalent" when −m < gl and gh < m, "non-inferior" when gl > −m;
    otherwise "inconclusive". `non_inferior` (gl > −m) is None without a margin. A score without
    direction is never better or worse: "increased", "decreased", "no change", "equivalent" (within ±m)
    or "inconclusive". Without a CI (fewer than 2 paired items) it is "cannot compare", never "inconclusive": an
    inconclusive test is one that was made.
    """
    if low is None or high is None:
        return "cannot compare", (False if margin is not None else None)
    if low == 0 and high == 0:
        return "no change", (None if margin is None else margin > 0)
    if direction == "lower":
        gain_low, gain_high = -high, -low
    else:
        gain_low, gain_high = low, high
    non_inferior = None if margin is None else gain_low > -margin
    if direction == "none":
        if low > 0:
            return "increased", non_inferior
        if high < 0:
            return "decreased", non_inferior
    elif gain_low > 0:
        return "better", non_inferior
    elif gain_high < 0:
        return "worse", non_inferior
    if margin is not None and gain_low > -margin and gain_high < margin:
        return "equivalent", non_inferior
    if margin is not None and direction != "none" and non_inferior:
        return "non-inferior", non_inferior
    return "inconclusive", non_inferior
