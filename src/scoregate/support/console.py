"""Rich output made on first use, so that `--help`, `--version` and completion never import rich.

Every console reads no emoji code and highlights nothing, and every piece of data printed goes through
`neutralize` (directly, or through `escape` or `cli.layout`), so text from a dataset, a model or a server
can neither style the output, nor move the cursor, retitle the window or open a link.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from scoregate.support.terminal_text import neutralize

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A `rich.console.Console` built on the first attribute access, and again when COLUMNS changed since (a
    console reads the width once: a command called in-process after another keeps each one's width)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._console: Any = None
        self._columns: str | None = None

    def __getattr__(self, name: str) -> Any:
        columns = os.environ.get("COLUMNS")
        if self._console is None or columns != self._columns:
            from rich.console import Console

            from scoregate.support.line_ends import trim_line_ends

            self._console, self._columns = trim_line_ends(Console(**self._kwargs)), columns
        return getattr(self._console, name)


def lazy_console(**kwargs: Any) -> Console:
    """Return a Console (same arguments; emoji codes and highlighting off) built only when first used; off a
    terminal no line it prints ends in spaces (`scoregate.support.line_ends`)."""
    return cast("Console", _LazyConsole(**{"emoji": False, "highlight": False, **kwargs}))


def escape(markup: str) -> str:
    """Return data safe inside rich markup: control characters neutralized, `[` of a tag escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(neutralize(markup))
