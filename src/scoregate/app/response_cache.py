"""The project's response cache (`scoregate cache stats|clear`): `.scoregate/cache.sqlite`."""

from __future__ import annotations

from pathlib import Path


def _cache_file(root: Path) -> Path:
    return root / ".scoregate" / "cache.sqlite"


def cache_stats(root: Path) -> tuple[int, int]:
    """How many responses the project's cache holds, and its file's size in bytes."""
    from scoregate.calls.cache import ResponseCache

    return ResponseCache(_cache_file(root)).stats()


def clear_cache(root: Path) -> int:
    """Delete every cached response of the project; return how many there were."""
    from scoregate.calls.cache import ResponseCache

    return ResponseCache(_cache_file(root)).clear()
