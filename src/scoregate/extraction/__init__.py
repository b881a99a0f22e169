"""The structured-extraction track: dataset loaders and checks, run-level aggregates, levels and decision.

Scoring itself lives in `scoregate.scoring.extraction` (metrics) and `scoregate.scoring.extraction_evaluator`
(the `kind: extraction` evaluator).
"""

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
