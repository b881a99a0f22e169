"""Rich tables for scores, gates, runs and rankings, readable at 80 columns without a TTY."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from scoregate.analysis.model_ranking import ModelRanking

STATUS_STYLE = {"pass": "green", "fail": "red", "incomplete": "yellow", "no_gates": "dim"}
RATE_METRICS = frozenset({"success_rate", "coverage"})


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) >= 1000 else f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return str(value)


def duration(ms: float | None) -> str:
    """Return a latency in ms below a second, else in s (e.g. `850 ms`, `30.2 s`); `—` when unknown."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    return f"{ms / 1000:.1f} s" if ms < 100_000 else f"{ms / 1000:.0f} s"


def percent(rate: float | None) -> str:
    """Return a rate in [0, 1] as a percentage (`97.5%`, `100%`); `—` when unknown."""
    if rate is None:
        return "—"
    text = f"{rate * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def metric_value(metric: str, value: Any) -> str:
    """Return a metric's value formatted by its kind: latency in ms/s, rates as percentages, else a number."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if metric.startswith("latency") or metric.endswith("_ms"):
            return duration(float(value))
        if metric in RATE_METRICS or metric.endswith("_rate"):
            return percent(float(value))
    return _num(value)


def run_label(model: str | None, prompts: Mapping[str, Any], run_id: str | None = None) -> str:
    """Return `<model> · <prompt>@<version>[, …]` (the model's name in scoregate.yaml), then the run id if given."""
    versions = ", ".join(f"{name}@{version}" for name, version in prompts.items())
    label = " · ".join(part for part in (model, versions) if part)
    return f"{label} ({run_id})" if run_id and label else label or (run_id or "")


def summary_label(summary: Mapping[str, Any]) -> str:
    """Return the model · prompt@version label of a run summary."""
    return run_label(summary.get("model"), summary.get("prompts") or {})


def _key_width(keys: list[str]) -> int:
    return max((len(k) for k in keys), default=5)


def scores_table(summary: dict[str, Any], directions: Mapping[str, str] | None = None) -> Table:
    """Return a table of every score: mean, CI, coverage, and why values are missing (keys never cut)."""
    from scoregate.catalog.directions import direction_arrow

    title = f"scores — run {summary['run_id']}"
    table = Table(title=title, title_justify="left")
    keys = list(summary["scores"])
    table.add_column("score", no_wrap=True, min_width=_key_width(keys) + (2 if directions else 0))
    table.add_column("mean", justify="right", no_wrap=True)
    table.add_column("95% CI", no_wrap=True)
    table.add_column("coverage", justify="right", no_wrap=True)
    table.add_column("not measured because", overflow="fold")
    for key, s in summary["scores"].items():
        if s["data_type"] == "text":
            mean, ci = "(text)", ""
        elif s["data_type"] == "categorical":
            mean, ci = "(categ.)", ""
        else:
            mean = _num(s.get("mean"))
            ci = f"[{_num(s.get('ci_low'))}, {_num(s.get('ci_high'))}]" if s.get("ci_low") is not None else "—"
        cov = f"{s['n_measured']}/{s['n_total']}"
        reasons = "; ".join(f"{r} ({n})" for r, n in list(s.get("null_reasons", {}).items())[:2])
        label = f"{key} {direction_arrow(directions.get(key, 'higher'))}" if directions else key
        table.add_row(label, mean, ci, cov, reasons[:120])
    return table


def gate_rule(g: Mapping[str, Any]) -> str:
    """Return a gate's rule as text, e.g. `mean(faithfulness_score) >= 4.2`."""
    return f"{g['stat']}({g['metric']}) {g['op']} {g['threshold']:g}"


def gates_table(summary: dict[str, Any]) -> Table:
    """Return a table of gate verdicts: gate and its rule stacked (never cut), observed, status, detail."""
    table = Table(title="gates", title_justify="left")
    rules = [gate_rule(g) for g in summary["gates"]]
    table.add_column(
        "gate / rule", no_wrap=True, min_width=max(_key_width(rules), _key_width([g["name"] for g in summary["gates"]]))
    )
    table.add_column("observed", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for g, rule in zip(summary["gates"], rules, strict=True):
        style = STATUS_STYLE[g["status"]]
        table.add_row(
            f"{g['name']}\n[dim]{rule}[/]", metric_value(g["metric"], g["observed"]),
            f"[{style}]{g['status'].upper()}[/]", g["detail"],
        )  # fmt: skip
    return table


def run_metrics_line(summary: dict[str, Any]) -> str:
    """Return one line of latency, tokens, cost and success."""
    m = summary["run_metrics"]
    cost = "unknown" if m["cost_usd_total"] is None else f"${m['cost_usd_total']:.4f}"
    return (
        f"items {m['items']}  success {percent(m['success_rate'])}  latency p50/p95 "
        f"{duration(m['latency_p50_ms'])}/{duration(m['latency_p95_ms'])}  tokens in/out "
        f"{_num(m['tokens_in_total'])}/{_num(m['tokens_out_total'])}  cost {cost}  retries {m['retries_total']}"
    )


def verdict_line(summary: Mapping[str, Any]) -> str:
    """Return `verdict: PASS` (or FAIL, INCOMPLETE), or a quiet `verdict: no gates` when none applied."""
    verdict = str(summary["verdict"])
    if verdict == "no_gates":
        return "verdict: [dim]no gates[/]"
    return f"verdict: [bold {STATUS_STYLE.get(verdict, 'white')}]{verdict.upper()}[/]"


def print_summary(console: Console, summary: dict[str, Any], directions: Mapping[str, str] | None = None) -> None:
    """Print the run's model and prompts, the score table, run metrics, gates and the verdict."""
    console.print(f"{summary_label(summary)}  on {summary.get('dataset')}", highlight=False)
    console.print(scores_table(summary, directions))
    console.print(run_metrics_line(summary), highlight=False)
    if summary["gates"]:
        console.print(gates_table(summary))
    console.print(verdict_line(summary))


def print_ranking(console: Console, ranking: ModelRanking) -> None:
    """Print a ranking as aligned tables: runs, pairwise verdicts, win rates, Pareto fronts, best by metric."""
    direction = "higher" if ranking.higher_is_better else "lower"
    console.print(
        f"ranking by {ranking.metric} ({direction} is better; {ranking.metric_source}) on {ranking.dataset}",
        highlight=False,
    )
    runs = Table(title="runs", title_justify="left")
    for column in ("rank", "model", "mean", "95% CI", "measured", "latency", "cost/item", "success"):
        runs.add_column(column, no_wrap=column in ("model", "95% CI"), justify="left" if column == "model" else "right")
    for r in ranking.runs:
        ci = "—" if r.ci_low is None else f"[{_num(r.ci_low)}, {_num(r.ci_high)}]"
        cost = "—" if r.cost_usd_per_item is None else f"${r.cost_usd_per_item:.6f}"
        runs.add_row(
            str(r.rank or "—"), r.label, _num(r.mean), ci, f"{r.measured}/{r.items}", duration(r.latency_ms), cost,
            percent(r.success_rate),
        )  # fmt: skip
    console.print(runs)
    pairs = Table(title="pairwise (candidate − baseline), CI Holm-adjusted across pairs", title_justify="left")
    for column in ("candidate", "baseline", "n", "Δ", "CI of Δ (level)", "p Holm", "verdict"):
        pairs.add_column(column, justify="right" if column in ("n", "Δ", "p Holm") else "left")
    for p in ranking.pairs:
        c = p.comparison
        ci = "—" if c["diff_ci_low"] is None else f"[{c['diff_ci_low']:+.3g}, {c['diff_ci_high']:+.3g}]"
        level = f"{c['ci_level']:.1%}".replace(".0%", "%")
        diff = "—" if c["diff"] is None else f"{c['diff']:+.3g}"
        pairs.add_row(p.candidate, p.baseline, str(p.shared_items), diff, f"{ci} {level}", _num(p.p_holm), p.verdict)
    console.print(pairs)
    labels = [r.label for r in ranking.runs]
    wins = Table(title="win rate (row beats column; ties count half)", title_justify="left")
    wins.add_column("")
    for label in labels:
        wins.add_column(label, justify="right")
    for a in labels:
        wins.add_row(a, *(percent(ranking.win_rate[a][b]) for b in labels))
    console.print(wins)
    for name in ("accuracy_vs_latency", "accuracy_vs_cost"):
        console.print(f"pareto {name}: {', '.join(ranking.pareto[name]['frontier']) or 'none'}", highlight=False)
    best = Table(title="best by metric (scores with a direction)", title_justify="left")
    best.add_column("metric", no_wrap=True, min_width=_key_width(list(ranking.best_by_metric)))
    best.add_column("best")
    best.add_column("value", justify="right", no_wrap=True)
    for metric, b in ranking.best_by_metric.items():
        best.add_row(metric, ", ".join(b["best"]), metric_value(metric, b["value"]))
    console.print(best)
    for note in ranking.notes:
        console.print(f"note: {note}", highlight=False)
