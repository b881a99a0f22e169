"""Why a run's scores were not measured, each reason said once.

One failed item leaves every score null for the same reason; listing it under each of 16 scores hides the
reasons that differ. A reason is said once, naming the scores it left null (the same reason over a
different number of items counts as a different reason).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ALL_BUT = 3
"""Name the exceptions (`every score but X, Y`) when a reason left all but at most this many scores null."""

Scores = Mapping[str, Mapping[str, Any]]


def name_scores(names: Sequence[str], every: Sequence[str]) -> str:
    """Name scores: `faithfulness_score`, `a, b`, `every score`, or `every score but WeightedQuality`."""
    others = [name for name in every if name not in names]
    if len(names) < 2:
        return ", ".join(names)
    if not others:
        return "every score"
    if len(names) > len(others) and len(others) <= ALL_BUT:
        return "every score but " + ", ".join(others)
    return ", ".join(names)


def grouped_reasons(scores: Scores, top: int | None = None) -> dict[tuple[str, ...], list[str]]:
    """Map each set of scores to the reasons (`reason (items)`) that left exactly those scores null.

    A reason over the same number of items is grouped across scores; `top` keeps each score's first `top`
    reasons (the summary lists them most frequent first). Sets and reasons are in first-seen order.
    """
    holders: dict[tuple[str, object], list[str]] = {}
    for key, stats in scores.items():
        for reason, count in list((stats.get("null_reasons") or {}).items())[:top]:
            holders.setdefault((str(reason), count), []).append(key)
    groups: dict[tuple[str, ...], list[str]] = {}
    for (reason, count), keys in holders.items():
        groups.setdefault(tuple(keys), []).append(f"{reason} ({count})")
    return groups


def reason_lines(scores: Scores, top: int | None = None) -> list[str]:
    """Return one line per set of scores with the same reasons: `scores: reason (items); reason (items)`."""
    every = list(scores)
    return [
        f"{name_scores(keys, every)}: {'; '.join(reasons)}" for keys, reasons in grouped_reasons(scores, top).items()
    ]


def shared_and_own(scores: Scores) -> tuple[list[str], dict[str, str]]:
    """Return the lines of reasons several scores share, and each score's own reasons (`reason (items); …`)."""
    every = list(scores)
    shared, own = [], {}
    for keys, reasons in grouped_reasons(scores).items():
        if len(keys) == 1:
            own[keys[0]] = "; ".join(reasons)
        else:
            shared.append(f"{name_scores(keys, every)}: {'; '.join(reasons)}")
    return shared, own
