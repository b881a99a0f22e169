"""The use cases (run, compare, rank, leaderboard, calibrate, hard cases, invalidate, promote, shard, merge).

Names for the CLI load their module on first use (PEP 562), so `import scoregate.app` imports none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoregate.app.merge import MergeOutcome, merge_run
    from scoregate.app.shards import parse_shard

_HOMES: dict[str, tuple[str, ...]] = {
    "scoregate.app.merge": ("MergeOutcome", "merge_run"),
    "scoregate.app.shards": ("parse_shard",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = ["MergeOutcome", "merge_run", "parse_shard"]


def __getattr__(name: str) -> Any:
    """Load a facade name from its module on first use."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
