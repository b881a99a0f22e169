"""Rich tables for scores, gates, runs and rankings, readable at 80 columns without a TTY."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scoregate.cli.corrected_render import print_corrected
from scoregate.cli.gate_view import print_gate_notes
from scoregate.cli.layout import KEEP, join_units, keep, keep_name, print_table, print_wrapped, signed
from scoregate.support.console import escape

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from scoregate.app.ranking import ModelRanking
    from scoregate.store.record import GateResult, RunSummary

STATUS_STYLE = {"pass": "green", "fail": "red", "incomplete": "yellow", "no_gates": "dim", "invalid": "red"}
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


def summary_label(summary: RunSummary) -> str:
    """Return the model · prompt@version label of a run summary."""
    return run_label(summary.model, summary.prompts)


print_table_or_lines = print_table
"""The name `cli.layout.print_table` had here first."""


def _key_width(keys: list[str]) -> int:
    return max((len(k) for k in keys), default=5)


def scores_table(summary: RunSummary, directions: Mapping[str, str] | None = None) -> Table:
    """Return a table of every score: direction, mean, CI, coverage (keys never cut; reasons in `null_reason_lines`)."""
    from rich.table import Table

    from scoregate.support.figures import direction_arrow

    table = Table(title=f"scores — run {escape(summary.run_id)}", title_justify="left")
    keys = list(summary.scores)
    table.add_column("score", no_wrap=True, min_width=_key_width(keys) + (2 if directions else 0))
    table.add_column("mean", justify="right", no_wrap=True)
    table.add_column("95% CI", no_wrap=True)
    table.add_column("coverage", justify="right", no_wrap=True)
    for key, s in summary.scores.items():
        if s.data_type in ("text", "categorical"):
            mean, ci = f"({s.data_type})", ""
        else:
            mean = _num(s.mean)
            ci = f"[{_num(s.ci_low)}, {_num(s.ci_high)}]" if s.ci_low is not None else "—"
        cov = f"{s.n_measured}/{s.n_total}"
        direction = "none" if s.data_type in ("text", "categorical") else (directions or {}).get(key, "higher")
        label = f"{key} {direction_arrow(direction)}" if directions else key
        table.add_row(escape(label), mean, ci, cov)
    return table


def null_reason_lines(summary: RunSummary) -> list[str]:
    """Return why scores were not measured (each score's top two reasons): `scores: reason (count); …`.

    A reason several scores share (one failed item leaves every score null) is said once, naming them.
    """
    from scoregate.app import reason_lines

    return reason_lines({key: {"null_reasons": s.null_reasons} for key, s in summary.scores.items()}, top=2)


def gate_rule(g: GateResult) -> str:
    """Return a gate's rule as text, e.g. `mean(faithfulness_score) >= 4.2`."""
    return f"{g.stat}({g.metric}) {g.op} {g.threshold:g}"


EVERY_ITEM_OBSERVED = (
    "observed: the statistic each rule reads over the measured items; for every_item, the worst item "
    "(the lowest for >=, the highest for <=), which may differ from the score's mean above"
)


SAID_BELOW = "items missing, named below"
"""A gate's detail in the table in place of a reason every gate shares and the command prints once."""


def gates_table(summary: RunSummary, said_below: str | None = None) -> Table:
    """Return a table of gate verdicts: the gate, its rule and its detail stacked (never cut), observed, status.
    A detail that starts with `said_below` (a reason the command prints once, under the table) shows SAID_BELOW."""
    from rich.table import Table

    table = Table(title="gates", title_justify="left", show_lines=True)
    rules = [gate_rule(g) for g in summary.gates]
    width = max(_key_width(rules), _key_width([g.name for g in summary.gates]))
    table.add_column("gate, rule, detail", overflow="fold", min_width=width, ratio=1)
    table.add_column("observed", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for g, rule in zip(summary.gates, rules, strict=True):
        style = STATUS_STYLE[g.status]
        detail = str(g.detail)
        if said_below and detail.startswith(said_below):
            detail = SAID_BELOW + detail.removeprefix(said_below)
        status = g.verdict_words(upper=True).replace(" on ", "\non ").replace(", ", ",\n")  # short lines: no_wrap
        table.add_row(
            f"[bold]{escape(g.name)}[/]\n{escape(rule)}\n[dim]{escape(detail)}[/]",
            metric_value(g.metric or "", g.observed), f"[{style}]{escape(status)}[/]",
        )  # fmt: skip
    return table


def run_metrics_fields(summary: RunSummary) -> list[str]:
    """Return the run metrics as `label value` fields: items, success, cache hits, latency, tokens, cost, retries.

    Calls answered from the response cache are counted and named: latency is measured on uncached task
    calls only, and the tokens of cached calls are labelled as not spent by this run (they cost nothing).
    """
    m = summary.run_metrics
    cached_task, task_calls = m.value("cached_task_calls") or 0, m.value("task_calls")
    cached_calls, calls = m.value("cached_calls") or 0, m.value("calls")
    repeats = summary.repeats
    each = f" × {repeats.k} repeats (these figures: repeat 1)" if repeats is not None else ""
    fields = [f"items {m.value('items')}{each}", f"success {percent(m.value('success_rate'))}"]
    if cached_task or cached_calls:
        of_task = f"{cached_task}/{task_calls}" if task_calls is not None else str(cached_task)
        of_all = f"{cached_calls}/{calls}" if calls is not None else str(cached_calls)
        fields.append(f"cached {of_task} task calls ({of_all} calls in all)")
    if m.value("latency_p50_ms") is None and cached_task and cached_task == task_calls:
        fields.append("latency not measured (every task call was cached)")
    else:
        fields.append(f"latency p50/p95 {duration(m.value('latency_p50_ms'))}/{duration(m.value('latency_p95_ms'))}")
    tokens = f"tokens in/out {_num(m.value('tokens_in_total'))}/{_num(m.value('tokens_out_total'))}"
    cached_in, cached_out = m.value("tokens_in_cached") or 0, m.value("tokens_out_cached") or 0
    if (cached_in or cached_out) and m.value("tokens_in_total") is not None:
        every = (cached_in, cached_out) == (m.value("tokens_in_total"), m.value("tokens_out_total"))
        tokens += " (all cached, not spent)" if every else f" ({cached_in}/{cached_out} cached, not spent)"
    fields.append(tokens)
    cost = "unknown" if m.value("cost_usd_total") is None else f"${m.value('cost_usd_total'):.4f}"
    fields.append(f"cost {cost}" + (" spent" if cached_calls and m.value("cost_usd_total") is not None else ""))
    fields.append(f"retries {m.value('retries_total')}")
    return fields


def run_metrics_line(summary: RunSummary) -> str:
    """Return the run metrics on one line (`print_summary` wraps it between fields, never inside one)."""
    return "  ".join(run_metrics_fields(summary))


def verdict_line(summary: RunSummary) -> str:
    """Return `verdict: PASS` (or FAIL, INCOMPLETE), or a quiet `verdict: no gates` when none applied."""
    verdict = str(summary.verdict)
    if verdict == "no_gates":
        return "verdict: [dim]no gates[/]"
    kept = summary.quarantine_note()
    note = f" ({escape(kept)})" if kept else ""  # a pass with flaky items kept out is never a plain pass
    return f"verdict: [bold {STATUS_STYLE.get(verdict, 'white')}]{verdict.upper()}[/]{note}"


def print_summary(
    console: Console,
    summary: RunSummary,
    directions: Mapping[str, str] | None = None,
    *,
    said_below: str | None = None,
) -> None:
    """Print the run's model and prompts, the score table, run metrics, gates and the verdict; `said_below`: a
    reason every gate's detail starts with, which the caller prints once after (see `gates_table`)."""
    print_wrapped(console, f"{keep_name(summary_label(summary))}  {keep('on', str(summary.dataset))}")
    print_table(console, scores_table(summary, directions))
    reasons = null_reason_lines(summary)
    if reasons:
        console.print("not measured because:")
        for line in reasons:
            print_wrapped(console, line.replace(" (", f"{KEEP}("), first="  ", indent="    ")
    if directions:
        print_wrapped(console, "↑ higher is better, ↓ lower is better, · no direction")
    print_corrected(console, summary)
    print_wrapped(console, join_units(run_metrics_fields(summary)))
    if summary.gates:
        print_table(console, gates_table(summary, said_below))
        print_gate_notes(console, summary, EVERY_ITEM_OBSERVED)  # the every_item note, slice tables, flaky items
    console.print(verdict_line(summary))


def _no_wrap_table(title: str, columns: list[tuple[str, str]]) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, no_wrap=True, justify=justify)  # type: ignore[arg-type]
    return table


def print_ranking(console: Console, ranking: ModelRanking) -> None:
    """Print a ranking as aligned tables (plain lines where a table would not fit): runs, pairs, win rates."""
    from rich.table import Table

    direction = "higher" if ranking.higher_is_better else "lower"
    print_wrapped(
        console, f"ranking by {ranking.metric} ({direction} is better; {ranking.metric_source}) on {ranking.dataset}"
    )
    runs = _no_wrap_table(
        "runs",
        [("rank", "right"), ("run", "left"), ("mean", "right"), ("95% CI", "left"), ("measured", "right"),
         ("latency", "right"), ("cost/item", "right"), ("success", "right")],
    )  # fmt: skip
    run_lines = []
    for r in ranking.runs:
        ci = "—" if r.ci_low is None else f"[{_num(r.ci_low)}, {_num(r.ci_high)}]"
        cost = "—" if r.cost_usd_per_item is None else f"${r.cost_usd_per_item:.6f}"
        cells = (str(r.rank or "—"), r.label, _num(r.mean), ci, f"{r.measured}/{r.items}", duration(r.latency_ms),
                 cost, percent(r.success_rate))  # fmt: skip
        runs.add_row(*(escape(cell) for cell in cells))
        run_lines.append(
            f"{cells[0]}. {r.label}\n   mean {cells[2]} {ci}  measured {cells[4]}  latency {cells[5]}  "
            f"cost/item {cost}  success {cells[7]}"
        )
    print_table_or_lines(console, runs, run_lines)
    pairs = _no_wrap_table(
        "pairwise (candidate − baseline), CI Holm-adjusted across pairs",
        [("candidate", "left"), ("baseline", "left"), ("n", "right"), ("Δ", "right"), ("CI of Δ (level)", "left"),
         ("p Holm", "right"), ("verdict", "left")],
    )  # fmt: skip
    pair_lines = []
    for p in ranking.pairs:
        c = p.comparison
        ci = "—" if c["diff_ci_low"] is None else f"[{signed(c['diff_ci_low'])}, {signed(c['diff_ci_high'])}]"
        level = f"{c['ci_level']:.1%}".replace(".0%", "%")
        diff = signed(c["diff"])
        row = (p.candidate, p.baseline, str(p.shared_items), diff, f"{ci} {level}", _num(p.p_holm), p.verdict)
        pairs.add_row(*(escape(cell) for cell in row))
        pair_lines.append(
            f"{p.candidate} vs {p.baseline}\n   n {p.shared_items}  Δ {diff}  {level} CI {ci}  "
            f"p Holm {_num(p.p_holm)}  → {p.verdict}"
        )
    print_table_or_lines(console, pairs, pair_lines)
    labels = [r.label for r in ranking.runs]
    wins = _no_wrap_table("win rate (row beats column; ties count half)", [("", "left")])
    for label in labels:
        wins.add_column(escape(label), justify="right", no_wrap=True)
    win_lines = []
    for a in labels:
        wins.add_row(escape(a), *(percent(ranking.win_rate[a][b]) for b in labels))
        win_lines += [f"{a} beats {b}: {percent(ranking.win_rate[a][b])}" for b in labels if b != a]
    print_table_or_lines(console, wins, win_lines)
    for name in ("accuracy_vs_latency", "accuracy_vs_cost"):
        print_wrapped(console, f"pareto {name}: {ranking.runs_text(ranking.pareto[name]['frontier']) or 'none'}")
    best = Table(title="best by metric (scores with a direction)", title_justify="left")
    names = {m: ranking.label(m) for m in ranking.best_by_metric}
    best.add_column("metric", no_wrap=True, min_width=_key_width(list(names.values())))
    best.add_column("best", overflow="fold")
    best.add_column("value", justify="right", no_wrap=True)
    for metric, b in ranking.best_by_metric.items():
        best.add_row(escape(names[metric]), escape(ranking.runs_text(b["best"])), metric_value(metric, b["value"]))
    print_table(console, best)
    for note in ranking.notes:
        print_wrapped(console, f"note: {note}")


FOLD_CHARS = 400
"""Input fields longer than this are folded in `runs show --item` (the full text is in --json)."""


def _score_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return _num(value)
    return "—" if value is None else str(value)


def _folded(text: str) -> str:
    return text if len(text) <= FOLD_CHARS else f"{text[:FOLD_CHARS].rstrip()} … [{len(text)} chars; --json for all]"


def _under(label: str, text: str, indent: str) -> str:
    """`label text`, the text's own lines indented under the label."""
    return f"{indent}{label}{text}".replace("\n", "\n" + indent + "  ")


def print_item_detail(console: Console, detail: Mapping[str, Any]) -> None:
    """Print one item in full: input fields (long ones folded), output, expected output, scores, calls."""
    from scoregate.support.figures import output_text

    head = join_units([f"item {detail['item_id']}", f"run {detail['run_id']}", f"prompt {detail['prompt']}"])
    print_wrapped(console, head, style="bold")
    print_wrapped(console, "input", style="bold")
    for key, value in (detail.get("input") or {}).items():
        print_wrapped(console, _under(f"{key}: ", _folded(output_text(value)), "  "))
    if detail.get("error"):
        print_wrapped(console, str(detail["error"]), first="error: ", first_style="bold red")
    print_wrapped(console, "output", style="bold")
    print_wrapped(console, output_text(detail.get("output")) or "—")
    if detail.get("raw_output") and detail.get("output") is None:
        print_wrapped(console, "raw output", style="bold")
        print_wrapped(console, str(detail["raw_output"]))
    if detail.get("expected_output") is not None:
        print_wrapped(console, "expected output", style="bold")
        print_wrapped(console, _folded(output_text(detail["expected_output"])))
    print_wrapped(console, "scores", style="bold")
    facts: Mapping[str, Any] = detail.get("fact_groups") or {}
    shown_facts: set[str] = set()
    for s in detail.get("scores") or []:
        if s["data_type"] == "text":
            continue
        value = _score_text(s["value"]) if s["value"] is not None else f"null — {s.get('reason') or 'no reason'}"
        spread = f"  (spread {_num(s['spread'])})" if s.get("spread") else ""
        print_wrapped(console, f"{s['name']}: {value}{spread}  {keep(s['evaluator'])}", first="  ")
        groups = facts.get(s["name"] + "_facts")
        comment = str(s.get("comment") or "")
        if groups is not None:  # the comment repeats the facts: keep its first line, then the groups
            comment = comment.splitlines()[0] if comment else ""
        if comment:
            print_wrapped(console, _under("reasoning: ", comment, "    "))
        if groups is not None:
            _print_fact_groups(console, groups)
            shown_facts.add(s["name"] + "_facts")
    texts = [s for s in detail.get("scores") or [] if s["data_type"] == "text" and s["name"] not in shown_facts]
    for s in texts:
        if s["name"] in facts:
            print_wrapped(console, f"{s['name']} (facts by verdict):", first="  ")
            _print_fact_groups(console, facts[s["name"]])
            continue
        value = s["value"] if s["value"] is not None else f"null — {s.get('reason') or 'no reason'}"
        print_wrapped(console, _under(f"{s['name']} (text): ", str(value), "  "))
    print_wrapped(console, "model calls", style="bold")
    for c in detail.get("calls") or []:
        tokens = f"{c.get('tokens_in') if c.get('tokens_in') is not None else '?'}/" + (
            f"{c.get('tokens_out') if c.get('tokens_out') is not None else '?'}"
        )
        cost = "cost —" if c.get("cost_usd") is None else f"${c['cost_usd']:.6f}"
        parts = [duration(c.get("latency_ms")), f"tokens in/out {tokens}", cost, f"retries {c.get('retries', 0)}",
                 f"cache {'hit' if c.get('cached') else 'miss'}"]  # fmt: skip
        line = f"{c['purpose']} {c['model']}: " + join_units(parts, ", ")
        print_wrapped(console, line, first="  ")
        if c.get("error"):
            print_wrapped(console, str(c["error"]), first="    error: ", indent="      ", first_style="red")


def _print_fact_groups(console: Console, groups: Sequence[Mapping[str, Any]]) -> None:
    """Print facts under their verdicts (both, only expected (missed), only produced), one per line."""
    for group in groups:
        print_wrapped(console, f"{group['title']} ({len(group['facts'])}):", first="    ")
        for fact in group["facts"] or ["(none)"]:
            print_wrapped(console, _under("", fact, "      "))
