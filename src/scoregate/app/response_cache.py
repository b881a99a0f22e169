"""The project's response cache (`scoregate cache stats|clear`): `.scoregate/cache.sqlite`."""

from __future__ import annotations

from pathlib import Path


class ProjectCache:
    """The responses a project's runs cached, in `.scoregate/cache.sqlite`."""

    def __init__(self, root: Path) -> None:
        self.file = root / ".scoregate" / "cache.sqlite"

    def stats(self) -> tuple[int, int]:
        """How many responses the cache holds, and its file's size in bytes."""
        from scoregate.calls.cache import ResponseCache

        return ResponseCache(self.file).stats()

    def clear(self) -> int:
        """Delete every cached response; return how many there were."""
        from scoregate.calls.cache import ResponseCache

        return ResponseCache(self.file).clear()
