"""Example custom metrics for `kind: custom` evaluators (see evaluators/word_overlap_v1.yaml)."""

from __future__ import annotations

import re

from scoregate.scoring.custom import CustomMetricResult

_WORD = re.compile(r"[a-z0-9']+")


async def word_recall(expected: str, got: str) -> CustomMetricResult:
    """The share (0-100) of the expected text's distinct words that the produced text uses; lists the missing."""
    want = set(_WORD.findall(expected.lower()))
    have = set(_WORD.findall(got.lower()))
    if not want:
        raise ValueError("the expected text has no words")
    missing = sorted(want - have)
    detail = f"{len(want) - len(missing)} of {len(want)} words used; missing: {', '.join(missing) or 'none'}"
    return CustomMetricResult(100.0 * (len(want) - len(missing)) / len(want), detail)
