"""The structured-extraction track: dataset loaders and checks, run-level aggregates, levels and decision.

Scoring itself lives in `scoregate.scoring.extraction` (metrics) and `scoregate.scoring.extraction_evaluator`
(the `kind: extraction` evaluator).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.extraction.connection import ConnectionReport, connection_test, list_models, run_connection_test
    from scoregate.extraction.decision import (
        LEVEL_ORDER,
        LEVEL_THRESHOLDS,
        Recommendation,
        level_gates,
        production_levels,
        recommend,
        summary_recommendation,
    )
    from scoregate.extraction.items import (
        INPUT_SCHEMA,
        ItemProblem,
        check_dataset,
        check_items,
        extraction_item,
        item_problem,
        write_dataset,
    )
    from scoregate.extraction.paraloq import load_paraloq, paraloq_items
    from scoregate.extraction.run_summary import ExtractionRunAggregator, aggregate_results, extraction_run_summary
    from scoregate.extraction.sgd import load_sgd, sgd_item

# Each name is imported on first use, so that importing one submodule (the CLI's `extraction check`) does not pull
# in the others (the connection test's HTTP client).
_HOME = {
    "ConnectionReport": "scoregate.extraction.connection",
    "connection_test": "scoregate.extraction.connection",
    "list_models": "scoregate.extraction.connection",
    "run_connection_test": "scoregate.extraction.connection",
    "LEVEL_ORDER": "scoregate.extraction.decision",
    "LEVEL_THRESHOLDS": "scoregate.extraction.decision",
    "Recommendation": "scoregate.extraction.decision",
    "level_gates": "scoregate.extraction.decision",
    "production_levels": "scoregate.extraction.decision",
    "recommend": "scoregate.extraction.decision",
    "summary_recommendation": "scoregate.extraction.decision",
    "INPUT_SCHEMA": "scoregate.extraction.items",
    "ItemProblem": "scoregate.extraction.items",
    "check_dataset": "scoregate.extraction.items",
    "check_items": "scoregate.extraction.items",
    "extraction_item": "scoregate.extraction.items",
    "item_problem": "scoregate.extraction.items",
    "write_dataset": "scoregate.extraction.items",
    "load_paraloq": "scoregate.extraction.paraloq",
    "paraloq_items": "scoregate.extraction.paraloq",
    "ExtractionRunAggregator": "scoregate.extraction.run_summary",
    "aggregate_results": "scoregate.extraction.run_summary",
    "extraction_run_summary": "scoregate.extraction.run_summary",
    "load_sgd": "scoregate.extraction.sgd",
    "sgd_item": "scoregate.extraction.sgd",
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
