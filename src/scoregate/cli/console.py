"""Rich output made on first use, so that `--help`, `--version` and completion never import rich.

Every console reads no emoji code and highlights nothing, and every piece of data printed goes through
`neutralize` (directly, or through `escape` or `cli.layout`), so text from a dataset, a model or a server
can neither style the output, nor move the cursor, retitle the window or open a link.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls (ESC starts CSI/OSC sequences; 0x9b and 0x9d are CSI and OSC alone), DEL, and the
bidirectional overrides that reorder what is shown; newline and tab are kept."""


def neutralize(text: str) -> str:
    """Return `text` with every terminal control character shown as an escape (`\\x1b`), newline and tab kept."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: _shown(m.group()), text)


def _shown(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


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
    """Return a Console (same arguments; emoji codes and highlighting off) built only when first used."""
    return cast("Console", _LazyConsole(**{"emoji": False, "highlight": False, **kwargs}))


def escape(markup: str) -> str:
    """Return data safe inside rich markup: control characters neutralized, `[` of a tag escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(neutralize(markup))
