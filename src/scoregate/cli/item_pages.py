"""`runs show --items`: the item table (or one line per item, `--compact`), printed a page at a time as the rows
stream from the run's results."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from scoregate.cli.render import _key_width, _score_text

if TYPE_CHECKING:
    from rich.console import Console

ITEM_PAGE_ROWS = 50
"""`runs show --items` prints its rows in tables of this many, each as soon as it is read."""
LINE_PAGE_ROWS = 500
"""`runs show --items --compact` writes its lines this many at a time."""
ERROR_CHARS = 100


def print_item_table(console: Console, table_data: Any, directions: Mapping[str, str] | None = None) -> None:
    """Print `runs show --items`: one row per item (id and prompt, output excerpt, scores stacked, error), a page of
    ITEM_PAGE_ROWS at a time as the rows stream in (the first page prints before the last item is read)."""
    from itertools import islice

    from rich.cells import cell_len
    from rich.table import Table

    from scoregate.cli.layout import print_table, print_wrapped
    from scoregate.support.console import escape
    from scoregate.support.figures import direction_arrow

    rows, shown, width = iter(table_data.rows), 0, 0
    while page := list(islice(rows, ITEM_PAGE_ROWS)):
        cells = []
        for row in page:
            scores = [
                f"{key} {direction_arrow((directions or {}).get(key, 'higher'))} {_score_text(row.scores.get(key))}"
                for key in table_data.keys
                if key in row.scores
            ]
            error = f"\n[red]error: {escape(row.error)}[/]" if row.error else ""
            item = f"[bold]{escape(row.item_id)}[/]\n[dim]{escape(row.prompt)}[/]\n{escape(row.output_excerpt)}{error}"
            cells.append((item, escape("\n".join(scores))))
            width = max(width, _key_width(table_data.keys) + 9, *(cell_len(line) for line in scores))
        title = escape(f"{table_data.selection} — run {table_data.run_id}") if not shown else None
        table = Table(title=title, title_justify="left", show_lines=True)
        table.add_column("item, prompt@version, output, error", overflow="fold", ratio=1)
        table.add_column("scores", no_wrap=True, min_width=width)  # pages keep one width: it only grows
        for cell in cells:
            table.add_row(*cell)
        print_table(console, table)
        shown += len(page)
    if not shown:  # an empty table frame reads as a rendering fault
        print_wrapped(console, table_data.empty)
        for note in table_data.notes:
            print_wrapped(console, f"note: {note}")
        return
    print_wrapped(console, f"{shown} item(s)")
    for note in table_data.notes:
        print_wrapped(console, f"note: {note}")


def item_line(row: Any) -> str:
    """One item on one line: its id (quoted as JSON when it holds whitespace), `ok` or `failed`, each score as
    `key value`, and the error's start."""
    item_id = row.item_id if row.item_id.isprintable() and not any(c.isspace() for c in row.item_id) else None
    parts = [item_id or json.dumps(row.item_id, ensure_ascii=False), "failed" if row.error else "ok"]
    parts += [f"{key} {_score_text(value)}" for key, value in row.scores.items()]
    if row.error:
        error = " ".join(row.error.split())
        parts.append("error: " + (error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 1] + "…"))
    return "  ".join(parts)


def print_item_lines(table_data: Any, write: Callable[[str], object], say: Callable[[str], object]) -> None:
    """Print `runs show --items --compact`: one `item_line` per item through `write`, a page at a time as the rows
    stream in; the count and the notes (or what an empty selection means) through `say`, so stdout holds the items
    alone (`| wc -l` counts them)."""
    lines, shown = [], 0
    for shown, row in enumerate(table_data.rows, start=1):
        lines.append(item_line(row) + "\n")
        if len(lines) == LINE_PAGE_ROWS or shown == 1:  # the first line at once, then pages
            write("".join(lines))
            lines = []
    write("".join(lines))
    say(f"{shown} item(s)" if shown else table_data.empty)
    for note in table_data.notes:
        say(f"note: {note}")
