"""Rich output made on first use, so that `--help`, `--version` and completion never import rich."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A `rich.console.Console` built on the first attribute access."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._console: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return getattr(self._console, name)


def lazy_console(**kwargs: Any) -> Console:
    """Return a Console (same arguments) that imports rich and is built only when first used."""
    return cast("Console", _LazyConsole(**kwargs))


def escape(markup: str) -> str:
    """Escape text for rich markup (`rich.markup.escape`, imported on first use)."""
    from rich.markup import escape as rich_escape

    return rich_escape(markup)
