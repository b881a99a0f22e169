"""Say how an extraction metric pools its items, so a micro value and a per-item mean of one name are told apart.

An extraction run holds each metric twice: a per-item score (`field_f1_partial` in the scores, whose mean the
headline tables and gates read) and a run-level value in `summary.json`'s `extraction.metrics` (for field
precision, recall and F1, type accuracy, hallucination and omission: micro, pooled over every field of every
item, so an item with many fields weighs more).
"""

from __future__ import annotations

from collections.abc import Collection

MICRO = "micro: pooled over all fields"
PER_ITEM = "mean of per-item values"
SHARE = "share of items"
RUN_LEVEL_PREFIX = "extraction."
"""How rankings name a run-level extraction metric beside the per-item score of the same name."""


def aggregation(key: str) -> str:
    """Return how the run-level extraction metric `key` (a key of `extraction.metrics`) pools its items."""
    if key == "eqs" or key.startswith("macro_"):
        return PER_ITEM
    if key.startswith("field_") or key in ("type_accuracy", "hallucination_rate", "omission_rate"):
        return MICRO
    return SHARE


def labelled(name: str, names: Collection[str]) -> str:
    """`name` with how it aggregates when `names` also holds its twin (`field_f1_partial` and
    `extraction.field_f1_partial`); `name` unchanged otherwise."""
    base = name.removeprefix(RUN_LEVEL_PREFIX)
    if name.startswith(RUN_LEVEL_PREFIX) and base in names:
        return f"{name} ({aggregation(base)})"
    if RUN_LEVEL_PREFIX + name in names:
        return f"{name} ({PER_ITEM})"
    return name
