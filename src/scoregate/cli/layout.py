"""Every line the CLI prints, laid out for any console width; the one way text and tables reach the console.

The rule is `scoregate.support.terminal_text`'s (a word is never broken; commands in backticks and words
joined with `KEEP` stay together; continuation lines are indented; control characters are neutralized).

A table is printed as a table only when every word of its title and cells shows whole at the width;
otherwise its facts are printed as lines laid out by the same rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scoregate.support.terminal_text import KEEP, join_units, keep, keep_name, keep_path, layout, print_wrapped, wrap

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

_RULES = re.compile(r"[\s\u2500-\u257f]+")
"""What separates words in a rendered table: spaces, and the box-drawing characters of its borders."""

__all__ = [
    "KEEP",
    "join_units",
    "keep",
    "keep_name",
    "keep_path",
    "layout",
    "plain",
    "print_table",
    "print_wrapped",
    "shows_whole",
    "signed",
    "table_lines",
    "wrap",
]


def signed(value: float | None) -> str:
    """Return a difference as every table prints it: `+0.12`, `-3`, `+123`; `0` unsigned; `—` for none."""
    if value is None:
        return "—"
    text = f"{value:+.0f}" if abs(value) >= 100 else f"{value:+.3g}"
    return "0" if text in ("+0", "-0") else text


def plain(cell: Any) -> str:
    """Return what a table cell or title shows, as plain text (markup read, styles dropped)."""
    from rich.text import Text

    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell, emoji=False).plain if isinstance(cell, str) else ""


def shows_whole(console: Console, table: Table) -> bool:
    """True when `table`, drawn at the console's width, shows every word of its title and cells whole."""
    shown: set[str] = set()
    for line in console.render_lines(table, console.options, pad=False):
        shown.update(_RULES.split("".join(segment.text for segment in line)))
    texts = [plain(table.title), *(plain(cell) for column in table.columns for cell in column.cells)]
    return all(word in shown for text in texts for word in _RULES.split(text) if word)


def table_lines(table: Table) -> list[str]:
    """Return a table's rows as plain lines: the first cell, then `header value` for every other cell."""
    headers = [plain(column.header).replace("\n", " ") for column in table.columns]
    rows = zip(*([plain(cell) for cell in column.cells] for column in table.columns), strict=True)
    lines = []
    for first, *rest in rows:
        head, *more = first.split("\n")
        units = []
        for header, value in zip(headers[1:], rest, strict=True):
            parts = [part for part in value.split("\n") if part.strip()]
            if parts:
                shown = "; ".join(keep(part) for part in parts) if len(parts) > 1 else parts[0]
                units.append(f"{keep(header)}{KEEP}{shown}" if header else shown)
        body = [f"  {line}" for line in more if line.strip()] + (["  " + "  ".join(units)] if units else [])
        lines.append("\n".join([head, *body]))
    return lines


def print_table(console: Console, table: Table, lines: Iterable[str] | None = None) -> None:
    """Print `table` when every word shows whole at the console's width, else its title and `lines`, laid out.

    `lines` default to `table_lines(table)`: the same facts, one block per row.
    """
    if shows_whole(console, table):
        console.print(table)
        return
    if table.title:
        print_wrapped(console, plain(table.title))
    for line in table_lines(table) if lines is None else lines:
        print_wrapped(console, line)
