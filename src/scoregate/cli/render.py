"""Rich tables for scores, gates and runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

STATUS_STYLE = {"pass": "green", "fail": "red", "incomplete": "yellow", "no_gates": "dim"}


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) >= 1000 else f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return str(value)


def scores_table(summary: dict[str, Any]) -> Table:
    """Return a table of every score: mean, CI, coverage, and why values are missing."""
    from rich.table import Table

    table = Table(title=f"scores — run {summary['run_id']}", title_justify="left")
    for column in ("score", "mean", "95% CI", "coverage", "not measured because"):
        table.add_column(column, justify="right" if column in ("mean", "coverage") else "left")
    for key, s in summary["scores"].items():
        if s["data_type"] == "text":
            mean, ci = "(text)", ""
        else:
            mean = _num(s.get("mean"))
            ci = f"[{_num(s.get('ci_low'))}, {_num(s.get('ci_high'))}]" if s.get("ci_low") is not None else "—"
        cov = f"{s['n_measured']}/{s['n_total']}"
        reasons = "; ".join(f"{r} ({n})" for r, n in list(s.get("null_reasons", {}).items())[:2])
        table.add_row(key, mean, ci, cov, reasons[:80])
    return table


def gates_table(summary: dict[str, Any]) -> Table:
    """Return a table of gate verdicts with the observed value."""
    from rich.table import Table

    table = Table(title="gates", title_justify="left")
    for column in ("gate", "rule", "observed", "status", "detail"):
        table.add_column(column)
    for g in summary["gates"]:
        style = STATUS_STYLE[g["status"]]
        rule = f"{g['stat']}({g['metric']}) {g['op']} {g['threshold']:g}"
        table.add_row(g["name"], rule, _num(g["observed"]), f"[{style}]{g['status'].upper()}[/]", g["detail"])
    return table


def run_metrics_line(summary: dict[str, Any]) -> str:
    """Return one line of latency, tokens, cost and success."""
    m = summary["run_metrics"]
    cost = "unknown" if m["cost_usd_total"] is None else f"${m['cost_usd_total']:.4f}"
    return (
        f"items {m['items']}  success {_num(m['success_rate'])}  latency p50/p95 "
        f"{_num(m['latency_p50_ms'], 4)}/{_num(m['latency_p95_ms'], 4)} ms  tokens in/out "
        f"{_num(m['tokens_in_total'])}/{_num(m['tokens_out_total'])}  cost {cost}  retries {m['retries_total']}"
    )


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    """Print the score table, run metrics, gates and the verdict."""
    console.print(scores_table(summary))
    console.print(run_metrics_line(summary))
    if summary["gates"]:
        console.print(gates_table(summary))
    verdict = summary["verdict"]
    console.print(f"verdict: [bold {STATUS_STYLE.get(verdict, 'white')}]{verdict.upper()}[/]")
