"""Print the consistency section of a repeated run (`run --repeat K`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from scoregate.cli.layout import print_table, print_wrapped
from scoregate.support.console import escape


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_consistency(console: Console, section: dict[str, Any]) -> None:
    """Print output agreement and, per score, the spread across repeats and pass@k / pass^k."""
    k = section["k"]
    print_wrapped(
        console,
        f"consistency over {k} repeats ({section['items_complete']}/{section['items']} items with all repeats): "
        f"identical outputs {_fmt(section['exact_match_rate'])}, "
        f"modal agreement {_fmt(section['modal_agreement_mean'])}",
    )
    table = Table()
    for column in ("score", "std mean", "std max", f"pass@{k}", f"pass^{k}"):
        table.add_column(column, justify="left" if column == "score" else "right")
    for key, stats in section["scores"].items():
        table.add_row(
            escape(key), _fmt(stats["std_mean"]), _fmt(stats["std_max"]),
            _fmt(stats.get("pass_at_k")), _fmt(stats.get("pass_hat_k")),
        )  # fmt: skip
    print_table(console, table)
