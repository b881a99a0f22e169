"""The extraction track's metric names: light constants the kind declares without loading the metrics."""

from __future__ import annotations

from typing import Literal

MatchMode = Literal["strict", "partial", "lenient"]
MATCH_MODES: tuple[MatchMode, ...] = ("strict", "partial", "lenient")

METRIC_KEYS: tuple[str, ...] = (
    "eqs",
    "parsed",
    "schema_valid",
    "exact_match",
    *(f"field_{stat}_{mode}" for mode in MATCH_MODES for stat in ("precision", "recall", "f1")),
    "type_accuracy",
    "hallucination_rate",
    "omission_rate",
)
"""The per-item metric keys of `ExtractionScores.metric_values()`, in a stable order."""
