"""The use cases (run, compare, rank, leaderboard, calibrate, hard cases, invalidate, promote, shard, merge) and the
facade.

A name the CLI imports from here loads its module on first use (PEP 562), so `import scoregate.app` imports none.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.app.budget_gate import forecast_experiment
    from scoregate.app.flaky_items import FlakyReport, flaky_report
    from scoregate.app.forecast import RunForecast
    from scoregate.app.merge import MergeOutcome, merge_run
    from scoregate.app.shards import parse_shard

_HOMES: dict[str, tuple[str, ...]] = {
    "scoregate.app.flaky_items": ("FlakyReport", "flaky_report"),
    "scoregate.app.merge": ("MergeOutcome", "merge_run"),
    "scoregate.app.shards": ("parse_shard",),
    "scoregate.app.budget_gate": ("forecast_experiment",),
    "scoregate.app.forecast": ("RunForecast",),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "FlakyReport",
    "MergeOutcome",
    "RunForecast",
    "flaky_report",
    "forecast_experiment",
    "merge_run",
    "parse_shard",
]


def __getattr__(name: str) -> Any:
    """Load a facade name from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
