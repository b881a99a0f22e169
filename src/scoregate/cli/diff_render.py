"""`scoregate diff`: two runs item by item, the score deltas, both outputs side by side and a word diff."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoregate.cli.layout import KEEP, keep, print_table, print_wrapped
from scoregate.cli.render import _score_text, _under
from scoregate.support.console import escape

if TYPE_CHECKING:
    from rich.console import Console


def print_run_diff(console: Console, diff: Any) -> None:
    """Print `scoregate diff`: per item, the score deltas, both outputs side by side, and a word diff."""
    from rich.table import Table

    by = f", sorted by the largest change of {diff.by}" if diff.by else ", in dataset order"
    changed = f"{diff.changed} changed{by}" if diff.changed else "none changed"
    shared = f"{diff.shared_items} shared item{'s' if diff.shared_items != 1 else ''}"
    print_wrapped(console, f"B = {diff.run_b} vs A = {diff.run_a}: {shared}, {changed}")
    if diff.by and diff.changed and diff.by_unchanged:
        print_wrapped(console, f"no item's {diff.by} changed; these items changed other scores or their output")
    for d in diff.items:
        deltas = "  ".join(
            keep(f"{k} {_score_text(d.scores_a.get(k))}→{_score_text(d.scores_b.get(k))}")
            + (f"{KEEP}({v:+.3g})" if v else "")
            for k, v in d.deltas.items()
            if v is None or v != 0 or k == diff.by
        )
        print_wrapped(console, d.item_id, first="── ", style="bold")
        print_wrapped(console, f"Δ {deltas or 'no score changed'}")
        side = Table(show_header=True, expand=True)
        side.add_column(f"A {escape(d.label_a)}", overflow="fold", ratio=1)
        side.add_column(f"B {escape(d.label_b)}", overflow="fold", ratio=1)
        a, b = d.error_a or d.output_a or "—", d.error_b or d.output_b or "—"
        side.add_row(escape(a), escape(b))
        print_table(console, side, [_under(f"A {d.label_a}: ", a, ""), _under(f"B {d.label_b}: ", b, "")])
        print_wrapped(console, f"word diff: {d.word_diff}")
    if diff.unchanged:
        shown = ", ".join(diff.unchanged[:10]) + (
            f", … ({len(diff.unchanged)} in all)" if len(diff.unchanged) > 10 else ""
        )
        print_wrapped(console, f"unchanged (same scores and output in both runs): {shown}")
    for note in diff.notes:
        print_wrapped(console, f"note: {note}")
