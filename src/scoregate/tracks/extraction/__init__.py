"""The structured-extraction track: dataset loaders and checks, run-level aggregates, levels and decision.

Its metrics are in `metrics/` (pure functions), the `kind: extraction` evaluator in `kind.py`, and its commands
in `cli.py`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.tracks.extraction.connection import (
        ConnectionReport,
        connection_test,
        list_models,
        run_connection_test,
    )
    from scoregate.tracks.extraction.decision import (
        LEVEL_ORDER,
        LEVEL_THRESHOLDS,
        Recommendation,
        level_gates,
        production_levels,
        recommend,
        summary_recommendation,
    )
    from scoregate.tracks.extraction.items import (
        INPUT_SCHEMA,
        ItemProblem,
        check_dataset,
        check_items,
        extraction_item,
        item_problem,
        write_dataset,
    )
    from scoregate.tracks.extraction.paraloq import load_paraloq, paraloq_items
    from scoregate.tracks.extraction.run_summary import (
        ExtractionRunAggregator,
        aggregate_results,
        extraction_run_summary,
    )
    from scoregate.tracks.extraction.sgd import load_sgd, sgd_item

# Each name is imported on first use, so that importing one submodule (the CLI's `extraction check`) does not pull
# in the others (the connection test's HTTP client).
_HOME = {
    "ConnectionReport": "scoregate.tracks.extraction.connection",
    "connection_test": "scoregate.tracks.extraction.connection",
    "list_models": "scoregate.tracks.extraction.connection",
    "run_connection_test": "scoregate.tracks.extraction.connection",
    "LEVEL_ORDER": "scoregate.tracks.extraction.decision",
    "LEVEL_THRESHOLDS": "scoregate.tracks.extraction.decision",
    "Recommendation": "scoregate.tracks.extraction.decision",
    "level_gates": "scoregate.tracks.extraction.decision",
    "production_levels": "scoregate.tracks.extraction.decision",
    "recommend": "scoregate.tracks.extraction.decision",
    "summary_recommendation": "scoregate.tracks.extraction.decision",
    "INPUT_SCHEMA": "scoregate.tracks.extraction.items",
    "ItemProblem": "scoregate.tracks.extraction.items",
    "check_dataset": "scoregate.tracks.extraction.items",
    "check_items": "scoregate.tracks.extraction.items",
    "extraction_item": "scoregate.tracks.extraction.items",
    "item_problem": "scoregate.tracks.extraction.items",
    "write_dataset": "scoregate.tracks.extraction.items",
    "load_paraloq": "scoregate.tracks.extraction.paraloq",
    "paraloq_items": "scoregate.tracks.extraction.paraloq",
    "ExtractionRunAggregator": "scoregate.tracks.extraction.run_summary",
    "aggregate_results": "scoregate.tracks.extraction.run_summary",
    "extraction_run_summary": "scoregate.tracks.extraction.run_summary",
    "load_sgd": "scoregate.tracks.extraction.sgd",
    "sgd_item": "scoregate.tracks.extraction.sgd",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)


__all__ = [
    "INPUT_SCHEMA",
    "LEVEL_ORDER",
    "LEVEL_THRESHOLDS",
    "ConnectionReport",
    "ExtractionRunAggregator",
    "ItemProblem",
    "Recommendation",
    "aggregate_results",
    "check_dataset",
    "check_items",
    "connection_test",
    "extraction_item",
    "extraction_run_summary",
    "item_problem",
    "level_gates",
    "list_models",
    "load_paraloq",
    "load_sgd",
    "paraloq_items",
    "production_levels",
    "recommend",
    "run_connection_test",
    "sgd_item",
    "summary_recommendation",
    "write_dataset",
]
