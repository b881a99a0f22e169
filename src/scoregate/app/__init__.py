"""The use cases (run, compare, rank, leaderboard, calibrate, hard cases, invalidate, promote, shard, merge, the
Langfuse connection check, score import and annotation) and the facade.

The facade is what the CLI imports of the layers below it, besides `scoregate.errors`, `scoregate.support` and the
run record's types (`scoregate.store.record`): every use case a command calls and what it raises or constructs, by
name; the commands of one thing share one object built from the project root (`StoredRuns`, `LocalModel`,
`LangfuseCatalog`, `ProjectOverview`, `ProjectCache`). A result type a command names only in annotations is
imported under `TYPE_CHECKING` from its use case's module (it loads nothing at run time), so it is not a facade
name. A name
loads its module on first use (PEP 562), so `import scoregate.app` and `scoregate --help` import none of them.
Each name is spelled once, in `_HOMES` (where it loads from); `__init__.pyi`, what mypy reads for its type, is
generated from that table by `make facade-stub` (tests/house/test_app_facade.py fails until the stub is regenerated).
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES: dict[str, tuple[str, ...]] = {
    # the use cases
    "scoregate.app.annotation": ("pull_scores", "queue_run"),
    "scoregate.app.run.budget_gate": ("forecast_experiment",),
    "scoregate.app.calibration_request": ("CalibrationRequest",),
    "scoregate.app.cascade": ("calibrate_stored_cascade",),
    "scoregate.app.plan": ("plan_stored_experiment",),
    "scoregate.app.plan_labels": ("LabelRequest", "plan_stored_labels"),
    "scoregate.app.calibration_runs": ("calibrate_stored_runs",),
    "scoregate.app.calibration_sources": ("calibrate_file",),
    "scoregate.app.comparison": ("CompareOptions", "compare_stored_runs"),
    "scoregate.app.coverage": ("measure_coverage",),
    "scoregate.app.run.experiment": ("run_experiment", "run_models"),
    "scoregate.app.run.flaky_items": ("flaky_report",),
    "scoregate.app.hardcases": ("add_hardcases",),
    "scoregate.app.harvest": ("harvest_dataset",),
    "scoregate.app.replay": ("replay_experiment",),
    "scoregate.app.invalidation": ("invalidate_run",),
    "scoregate.app.run.judge_canary": ("run_canaries",),
    "scoregate.app.judges_promotion": ("move_judge",),
    "scoregate.app.judges_shadow": ("shadow_judge",),
    "scoregate.app.judges_sync": ("sync_project_judges",),
    "scoregate.app.langfuse_check": ("check_connection",),
    "scoregate.app.langfuse_catalog": ("LangfuseCatalog",),
    "scoregate.app.leaderboard": ("update_leaderboard",),
    "scoregate.app.local_model": ("LocalModel",),
    "scoregate.app.merge": ("merge_run",),
    "scoregate.app.mirror_sync": ("sync_stored_run",),
    "scoregate.app.project_info": ("ProjectOverview",),
    "scoregate.app.promotion": ("PromotionRefused", "promote", "promotion_history", "rollback"),
    "scoregate.app.ranking": ("rank_stored_runs",),
    "scoregate.app.rollout": ("Rollouts",),
    "scoregate.app.response_cache": ("ProjectCache",),
    "scoregate.app.run.run_options": ("RunOptions", "check_run_flags"),
    "scoregate.app.run_watch": ("watch_run",),
    "scoregate.app.runs": ("StoredRuns",),
    "scoregate.app.scores_import": ("import_scores",),
    "scoregate.app.run.shards": ("parse_shard",),
    "scoregate.app.run.stop_early": ("stop_line",),
    "scoregate.app.plugin_listing": ("check_plugins", "installed_plugins"),
    "scoregate.app.track_listing": ("track_commands",),
    "scoregate.app.traces_score": ("score_traces",),
    # what the commands print or parse, from the layers below app, support and the record (the CLI may import those
    # two itself); no outside system: the CLI reaches one only through a use case
    "scoregate.analysis.null_reasons": ("reason_lines",),
    "scoregate.catalog.project": ("find_root",),
    "scoregate.report.write": ("report_runs",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> Any:
    """Load a facade name from its module on first use (looked up each time, so a patched module is seen)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
