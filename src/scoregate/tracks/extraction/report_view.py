"""What the HTML report shows of one run's extraction block, in the report's generic track-section form.

A section (see `scoregate.tracks.base.Track.report_view`): `title`; `note`, text parts each bold or not (None:
not known); `values`, (label, number) rows; `charts`, bar charts (values, label, percent); `tables`, each with a title,
a head and rows of cells `[value, digits]` (digits None: the value as it is).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoregate.tracks.extraction.aggregation import aggregation

SHOWN = ("eqs", "schema_validity_rate", "exact_match_rate", "field_f1_partial", "hallucination_rate",
         "omission_rate", "type_accuracy")  # fmt: skip


def extraction_view(block: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The extraction track's breakdowns a person looks at (the full block stays in summary.json), or None."""
    if not block:
        return None
    fields = block.get("fields") or {}
    counts = fields.get("counts") or {}
    metrics = block.get("metrics") or {}
    levels = ", ".join(f"{k} {v.get('verdict')}" for k, v in (block.get("levels") or {}).items())
    complexity = (block.get("complexity_analysis") or {}).get("bins") or {}
    by_type = {t: v.get("omission_rate") for t, v in (fields.get("breakdowns") or {}).get("type", {}).items()}
    match = {k: counts.get(k) for k in ("exact", "partial", "incorrect", "missed", "spurious")}
    return {
        "title": "Extraction breakdowns",
        "note": [
            ["recommendation: ", False],
            [(block.get("recommendation") or {}).get("text"), True],
            [f"; level reached: {block.get('level_reached') or 'none'} ({levels})", False],
        ],
        "values": [[f"{k} ({aggregation(k)})", metrics.get(k)] for k in SHOWN],
        "charts": [
            [match, f"fields by match category (of {counts.get('expected')} expected)", False],
            [by_type, "omission rate by field type", True],
            [fields.get("hallucinations") or {}, "hallucinated fields by severity", False],
            [fields.get("score_distribution") or {}, "fields by similarity band", False],
        ],
        "tables": [
            {
                "title": "By schema complexity",
                "head": ["bin", "items", "field F1 (partial, micro)", "latency mean ms"],
                "rows": [
                    [
                        [name, None],
                        [b.get("items"), None],
                        [b.get("field_f1_partial_micro"), 3],
                        [b.get("latency_mean_ms"), 4],
                    ]
                    for name, b in complexity.items()
                ],
            }
        ],
    }
