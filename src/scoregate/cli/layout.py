"""Plain lines laid out for narrow consoles: broken only between words, never inside a kept-together unit.

A unit is kept together by joining its words with `KEEP` (a no-break space): a label and its value
(`cost $0.0012`), an identifier list's `model ·`, a count and its noun. Text in backticks (a command to
type) is kept together as well. Continuation lines are indented, so they read as part of the line above.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

KEEP = "\u00a0"
"""Joins words that must stay on one line; printed as a plain space."""

_COMMAND = re.compile(r"`[^`]*`")


def keep(*words: str) -> str:
    """Return `words` joined so that no line break falls between them."""
    return KEEP.join(word.replace(" ", KEEP) for word in words)


def keep_name(name: str) -> str:
    """Return a run name (`<model> · <prompt>@<version>, …`) breakable only after a separator, never before `·`."""
    return name.replace(" · ", f"{KEEP}· ")


def wrap(text: str, width: int, *, first: str = "", indent: str = "  ") -> list[str]:
    """Return `text` as lines of at most `width` cells (a unit wider than a line overflows, never cut).

    `first` opens the first line, `indent` every continuation line.
    """
    text = _COMMAND.sub(lambda m: m.group().replace(" ", KEEP), text)
    lines = textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip
    return [line.replace(KEEP, " ") for line in lines] or [first.rstrip()]


def join_units(units: Iterable[str], sep: str = "  ") -> str:
    """Return kept-together `units` joined by `sep` (lines may break only between them)."""
    return sep.join(keep(unit) for unit in units if unit)


def print_wrapped(
    console: Console, text: str, *, first: str = "", indent: str = "  ", style: str | None = None
) -> None:
    """Print `text` wrapped to the console's width with indented continuation lines (no markup is read)."""
    from rich.markup import escape

    for line in wrap(text, console.width, first=first, indent=indent):
        console.print(escape(line), style=style, soft_wrap=True, highlight=False)
