"""The use cases (run, compare, rank, leaderboard, calibrate, hard cases, invalidate, promote, shard, merge) and the
facade.

The facade is what the CLI imports, and all it imports past itself besides `scoregate.errors`: every function
and result type a command needs, by name. A name loads its module on first use (PEP 562), so `import
scoregate.app` and `scoregate --help` import none of them. To add one: its import under TYPE_CHECKING (the
types), a line in `_HOMES` (where it loads from) and its name in `__all__` (tests/test_app_facade.py checks
that the three agree).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate import __version__
    from scoregate.analysis.compare_runs import RunSide, ScoreComparison, parse_margins
    from scoregate.analysis.items import output_text
    from scoregate.analysis.judge_calibration import parse_scale
    from scoregate.analysis.model_ranking import ModelRanking
    from scoregate.analysis.null_reasons import reason_lines
    from scoregate.analysis.verdicts import VERDICT_RULE, WILCOXON_VARIANT
    from scoregate.app.budget_gate import forecast_experiment
    from scoregate.app.calibration_runs import calibrate_stored_runs
    from scoregate.app.calibration_sources import calibrate_file
    from scoregate.app.comparison import CompareOptions, CompareOutcome, compare_stored_runs
    from scoregate.app.experiment import run_experiment, run_models
    from scoregate.app.flaky_items import FlakyReport, flaky_report
    from scoregate.app.forecast import RunForecast
    from scoregate.app.hardcases import HardcasesReport, add_hardcases
    from scoregate.app.invalidation import invalidate_run
    from scoregate.app.judge_canary import CanaryResult, run_canaries
    from scoregate.app.langfuse_catalog import (
        langfuse_configured,
        sync_project_dashboards,
        sync_project_datasets,
        sync_project_prompts,
        sync_score_configs,
    )
    from scoregate.app.leaderboard import update_leaderboard
    from scoregate.app.local_model import local_model_status, serve_local_model, stop_local_model
    from scoregate.app.merge import merge_run
    from scoregate.app.merge_outcome import MergeOutcome
    from scoregate.app.mirror_sync import sync_stored_run
    from scoregate.app.plugin_listing import check_plugins, installed_plugins, plugin_commands
    from scoregate.app.project_info import check_project, experiment_rows, score_directions
    from scoregate.app.promotion import (
        NO_LANGFUSE,
        PromotionRefused,
        promote,
        promotion_history,
        rollback,
    )
    from scoregate.app.promotion_evidence import version_label, version_name
    from scoregate.app.promotion_result import PromotionResult
    from scoregate.app.ranking import rank_stored_runs
    from scoregate.app.response_cache import cache_stats, clear_cache
    from scoregate.app.run_options import RunOptions, RunOutcome, check_run_flags
    from scoregate.app.runs import RunView, diff_stored_runs, listed_runs, run_item, run_view
    from scoregate.app.shards import parse_shard
    from scoregate.app.stop_early import stop_line
    from scoregate.app.track_listing import track_commands
    from scoregate.catalog.directions import direction_arrow
    from scoregate.catalog.project import find_root
    from scoregate.engine.progress import duration_text
    from scoregate.engine.watch import ending_line, follow, progress_line, run_to_watch
    from scoregate.integrations.langfuse.annotation import pull_scores, queue_run
    from scoregate.integrations.langfuse.check import check_connection
    from scoregate.integrations.langfuse.datasets_sync import DatasetSyncReport
    from scoregate.integrations.langfuse.prompts_sync import PromptPlan, PromptSyncReport
    from scoregate.integrations.langfuse.score_configs import ScoreConfigReport
    from scoregate.integrations.langfuse.scores_import import ImportReport, import_scores
    from scoregate.report.write import report_runs
    from scoregate.store.identity import RunOverview, manifest_run_name
    from scoregate.store.record import GateResult, RunSummary
    from scoregate.support.redaction import redact
    from scoregate.support.start_gc import end_collector_hold, hold_collector, release_collector
    from scoregate.support.terminal_text import (
        KEEP,
        join_units,
        keep,
        keep_name,
        keep_path,
        layout,
        neutralize,
        print_wrapped,
        wrap,
    )

_HOMES: dict[str, tuple[str, ...]] = {
    # the use cases
    "scoregate.app.budget_gate": ("forecast_experiment",),
    "scoregate.app.calibration_runs": ("calibrate_stored_runs",),
    "scoregate.app.calibration_sources": ("calibrate_file",),
    "scoregate.app.comparison": ("CompareOptions", "CompareOutcome", "compare_stored_runs"),
    "scoregate.app.experiment": ("run_experiment", "run_models"),
    "scoregate.app.flaky_items": ("FlakyReport", "flaky_report"),
    "scoregate.app.forecast": ("RunForecast",),
    "scoregate.app.hardcases": ("HardcasesReport", "add_hardcases"),
    "scoregate.app.invalidation": ("invalidate_run",),
    "scoregate.app.judge_canary": ("CanaryResult", "run_canaries"),
    "scoregate.app.langfuse_catalog": (
        "langfuse_configured",
        "sync_project_dashboards",
        "sync_project_datasets",
        "sync_project_prompts",
        "sync_score_configs",
    ),
    "scoregate.app.leaderboard": ("update_leaderboard",),
    "scoregate.app.local_model": ("local_model_status", "serve_local_model", "stop_local_model"),
    "scoregate.app.merge": ("merge_run",),
    "scoregate.app.merge_outcome": ("MergeOutcome",),
    "scoregate.app.mirror_sync": ("sync_stored_run",),
    "scoregate.app.project_info": ("check_project", "experiment_rows", "score_directions"),
    "scoregate.app.promotion": (
        "NO_LANGFUSE",
        "PromotionRefused",
        "promote",
        "promotion_history",
        "rollback",
    ),
    "scoregate.app.promotion_evidence": ("version_label", "version_name"),
    "scoregate.app.promotion_result": ("PromotionResult",),
    "scoregate.app.ranking": ("rank_stored_runs",),
    "scoregate.app.response_cache": ("cache_stats", "clear_cache"),
    "scoregate.app.run_options": ("RunOptions", "RunOutcome", "check_run_flags"),
    "scoregate.app.runs": ("RunView", "diff_stored_runs", "listed_runs", "run_item", "run_view"),
    "scoregate.app.shards": ("parse_shard",),
    "scoregate.app.stop_early": ("stop_line",),
    "scoregate.app.plugin_listing": ("check_plugins", "installed_plugins", "plugin_commands"),
    "scoregate.app.track_listing": ("track_commands",),
    # what the commands print, from the layers below (the CLI names none of them itself)
    "scoregate": ("__version__",),
    "scoregate.analysis.compare_runs": ("RunSide", "ScoreComparison", "parse_margins"),
    "scoregate.analysis.items": ("output_text",),
    "scoregate.analysis.judge_calibration": ("parse_scale",),
    "scoregate.analysis.model_ranking": ("ModelRanking",),
    "scoregate.analysis.null_reasons": ("reason_lines",),
    "scoregate.analysis.verdicts": ("VERDICT_RULE", "WILCOXON_VARIANT"),
    "scoregate.catalog.directions": ("direction_arrow",),
    "scoregate.catalog.project": ("find_root",),
    "scoregate.engine.progress": ("duration_text",),
    "scoregate.engine.watch": ("ending_line", "follow", "progress_line", "run_to_watch"),
    "scoregate.integrations.langfuse.annotation": ("pull_scores", "queue_run"),
    "scoregate.integrations.langfuse.check": ("check_connection",),
    "scoregate.integrations.langfuse.datasets_sync": ("DatasetSyncReport",),
    "scoregate.integrations.langfuse.prompts_sync": ("PromptPlan", "PromptSyncReport"),
    "scoregate.integrations.langfuse.score_configs": ("ScoreConfigReport",),
    "scoregate.integrations.langfuse.scores_import": ("ImportReport", "import_scores"),
    "scoregate.report.write": ("report_runs",),
    "scoregate.store.identity": ("RunOverview", "manifest_run_name"),
    "scoregate.store.record": ("GateResult", "RunSummary"),
    "scoregate.support.redaction": ("redact",),
    "scoregate.support.start_gc": ("end_collector_hold", "hold_collector", "release_collector"),
    "scoregate.support.terminal_text": (
        "KEEP",
        "join_units",
        "keep",
        "keep_name",
        "keep_path",
        "layout",
        "neutralize",
        "print_wrapped",
        "wrap",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "KEEP",
    "NO_LANGFUSE",
    "VERDICT_RULE",
    "WILCOXON_VARIANT",
    "CanaryResult",
    "CompareOptions",
    "CompareOutcome",
    "DatasetSyncReport",
    "FlakyReport",
    "GateResult",
    "HardcasesReport",
    "ImportReport",
    "MergeOutcome",
    "ModelRanking",
    "PromotionRefused",
    "PromotionResult",
    "PromptPlan",
    "PromptSyncReport",
    "RunForecast",
    "RunOptions",
    "RunOutcome",
    "RunOverview",
    "RunSide",
    "RunSummary",
    "RunView",
    "ScoreComparison",
    "ScoreConfigReport",
    "__version__",
    "add_hardcases",
    "cache_stats",
    "calibrate_file",
    "calibrate_stored_runs",
    "check_connection",
    "check_plugins",
    "check_project",
    "check_run_flags",
    "clear_cache",
    "compare_stored_runs",
    "diff_stored_runs",
    "direction_arrow",
    "duration_text",
    "end_collector_hold",
    "ending_line",
    "experiment_rows",
    "find_root",
    "flaky_report",
    "follow",
    "forecast_experiment",
    "hold_collector",
    "import_scores",
    "installed_plugins",
    "invalidate_run",
    "join_units",
    "keep",
    "keep_name",
    "keep_path",
    "langfuse_configured",
    "layout",
    "listed_runs",
    "local_model_status",
    "manifest_run_name",
    "merge_run",
    "neutralize",
    "output_text",
    "parse_margins",
    "parse_scale",
    "parse_shard",
    "plugin_commands",
    "print_wrapped",
    "progress_line",
    "promote",
    "promotion_history",
    "pull_scores",
    "queue_run",
    "rank_stored_runs",
    "reason_lines",
    "redact",
    "release_collector",
    "report_runs",
    "rollback",
    "run_canaries",
    "run_experiment",
    "run_item",
    "run_models",
    "run_to_watch",
    "run_view",
    "score_directions",
    "serve_local_model",
    "stop_line",
    "stop_local_model",
    "sync_project_dashboards",
    "sync_project_datasets",
    "sync_project_prompts",
    "sync_score_configs",
    "sync_stored_run",
    "track_commands",
    "update_leaderboard",
    "version_label",
    "version_name",
    "wrap",
]


def __getattr__(name: str) -> Any:
    """Load a facade name from its module on first use (looked up each time, so a patched module is seen)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
