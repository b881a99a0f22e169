"""The report's sections for several runs: the comparison of two, the ranking of several, the leaderboard."""

from __future__ import annotations

from typing import Any

from scoregate.analysis.verdicts import VERDICT_RULE
from scoregate.report.charts import fmt, scatter
from scoregate.report.corrected_view import corrected_difference_cell
from scoregate.report.html_text import esc, run_metric_text
from scoregate.support.figures import direction_arrow

VERDICT_CLASS = {
    "better": "ok", "non-inferior": "ok", "equivalent": "ok", "worse": "bad", "inconclusive": "warn",
    "increased": "dim", "decreased": "dim", "no change": "dim", "cannot compare": "warn",
}  # fmt: skip


def comparison_section(report: dict[str, Any]) -> str:
    c = report.get("comparison")
    if not c:
        return ""
    level = f"{1 - c['alpha']:.0%}"
    rows = []
    for name, s in c["scores"].items():
        ci = "—" if s["diff_ci_low"] is None else f"[{fmt(s['diff_ci_low'])}, {fmt(s['diff_ci_high'])}]"
        if s["diff_ci_low"] is not None and s.get("ci_level") is not None and f"{s['ci_level']:.0%}" != level:
            ci += f" at {s['ci_level']:.1%}"
        arrow = direction_arrow(s["direction"])
        mark = "" if s.get("primary", True) else ' <span class="dim">(exploratory)</span>'
        cls = VERDICT_CLASS.get(s["verdict"], "dim")
        wtl = "—" if s["direction"] == "none" else f"{s['wins']}/{s['ties']}/{s['losses']}"  # a win needs a direction
        rows.append(
            f'<tr><td>{esc(name)} {arrow}{mark}</td><td class="{cls}" title="{esc(s["sentence"])}">'
            f"{esc(s['verdict'])}</td><td>{esc(s['n'])}</td><td>{esc(fmt(s['mean_a']))}</td>"
            f"<td>{esc(fmt(s['mean_b']))}</td><td>{esc(fmt(s['diff']))}</td><td>{esc(ci)}{corrected_difference_cell(s)}</td>"
            f"<td>{esc(fmt(s['p_adjusted']))}</td><td>{esc(fmt(s['cohens_dz']))}</td>"
            f"<td>{esc(wtl)}</td></tr>"
        )
    warnings = "".join(f'<p class="warn">{esc(w)}</p>' for w in c["warnings"])
    skipped = "; ".join(f"{k} ({v})" for k, v in c["skipped_scores"].items())
    return (
        '<section id="comparison"><h2>Comparison: B against A, item by item</h2>'
        f'<p class="note">A = {esc(c["run_a"]["run_id"])} (baseline), B = {esc(c["run_b"]["run_id"])}; paired on '
        f"{esc(c['shared_items'])} shared items ({esc(c['run_a']['only_here'])} only in A, "
        f"{esc(c['run_b']['only_here'])} only in B). "
        "Δ = B − A, and every mean, Δ and test here is over the items both runs measured; W/T/L counts items "
        "where B wins, ties or loses (— for a score without direction: a win needs one); dz: Cohen's dz, the mean "
        f"Δ in standard deviations of Δ. {esc(VERDICT_RULE)} "
        f"p: {esc(c.get('wilcoxon') or 'Wilcoxon signed-rank')} (Holm-adjusted for secondary scores).</p>{warnings}"
        '<div class="table-wrap"><table class="grid"><thead><tr><th>score</th><th>verdict</th><th>n</th><th>mean A</th>'
        f"<th>mean B</th><th>Δ</th><th>{level} CI of Δ</th><th>p (Holm)</th><th>dz</th><th>W/T/L</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        + (f'<p class="note">not compared: {esc(skipped)}</p>' if skipped else "")
        + "</section>"
    )


def ranking_section(report: dict[str, Any]) -> str:
    r = report.get("ranking")
    if not r:
        return ""
    rows = "".join(
        f"<tr><td>{esc(x['rank'] or '—')}</td><td>{esc(x['label'])}</td><td>{esc(fmt(x['mean']))}</td>"
        f"<td>[{esc(fmt(x['ci_low']))}, {esc(fmt(x['ci_high']))}]</td><td>{esc(x['measured'])}/{esc(x['items'])}</td>"
        f"<td>{esc(fmt(x['latency_ms'], 4))}</td><td>{esc(fmt(x['cost_usd_per_item']))}</td>"
        f"<td>{esc(run_metric_text('success_rate', x['success_rate']))}</td></tr>"
        for x in r["runs"]
    )
    labels = [x["label"] for x in r["runs"]]
    win = "".join(
        f"<tr><th>{esc(a)}</th>" + "".join(f"<td>{esc(fmt(r['win_rate'][a][b]))}</td>" for b in labels) + "</tr>"
        for a in labels
    )
    pairs = "".join(
        f"<tr><td>{esc(p['candidate'])}</td><td>{esc(p['baseline'])}</td><td>{esc(p['verdict'])}</td>"
        f"<td>{esc(p['shared_items'])}</td>"
        f"<td>{esc(fmt(p['comparison']['diff']))}</td>"
        f"<td>[{esc(fmt(p['comparison']['diff_ci_low']))}, {esc(fmt(p['comparison']['diff_ci_high']))}]</td>"
        f"<td>{esc(fmt(p['p_holm']))}</td></tr>"
        for p in r["pairs"]
    )
    metric = r["metric"]
    lat = scatter([(x["label"], x["latency_ms"], x["mean"]) for x in r["runs"]], x_label="latency p50 ms",
                  y_label=metric, front=r["pareto"]["accuracy_vs_latency"]["frontier"])  # fmt: skip
    costs = [x["cost_usd_per_item"] for x in r["runs"] if x["cost_usd_per_item"] is not None]
    free = bool(costs) and not any(costs)  # every run free: every point at 0, no front to draw
    every = "" if len(costs) == len(r["runs"]) else " with a known cost"
    cost = "" if free else scatter(
        [(x["label"], x["cost_usd_per_item"], x["mean"]) for x in r["runs"]], x_label="cost per item USD",
        y_label=metric, front=r["pareto"]["accuracy_vs_cost"]["frontier"],
    )  # fmt: skip
    missing = [(n, ", ".join(r["pareto"][n]["not_measured"])) for n in ("accuracy_vs_latency", "accuracy_vs_cost")]
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in r["notes"])
    figures = "".join(f'<figure class="fig">{c}</figure>' for c in (lat, cost) if c)
    unmeasured = "".join(
        f'<p class="note">{esc(n)}: not measured for {esc(names)}</p>' for n, names in missing if names
    ) + (f'<p class="note">every run{every} was free (0 USD per item): no accuracy-against-cost front to draw</p>'
         if free else "")  # fmt: skip
    return (
        f'<section id="ranking"><h2>Ranking by {esc(metric)} ({"higher" if r["higher_is_better"] else "lower"} '
        "is better)</h2>"
        '<div class="table-wrap"><table class="grid"><thead><tr><th>rank</th><th>run</th><th>mean</th>'
        "<th>95% CI</th><th>measured</th>"
        f"<th>latency ms</th><th>cost/item USD</th><th>success</th></tr></thead><tbody>{rows}</tbody></table></div>"
        f'<h3>Pareto fronts</h3><p class="note">The line joins the runs no other run beats on both axes.</p>'
        f'<div class="charts">{figures}</div>{unmeasured}'
        "<h3>Pairwise tests (candidate − baseline, Holm across pairs)</h3>"
        '<div class="table-wrap"><table class="grid"><thead><tr>'
        "<th>candidate</th><th>baseline</th><th>verdict</th><th>n</th><th>Δ</th><th>Holm CI of Δ</th><th>p (Holm)</th>"
        "</tr></thead>"
        f"<tbody>{pairs}</tbody></table></div>"
        "<h3>Win rate (row beats column; ties count half)</h3>"
        '<div class="table-wrap"><table class="grid"><thead><tr><th></th>'
        + "".join(f"<th>{esc(x)}</th>" for x in labels)
        + f"</tr></thead><tbody>{win}</tbody></table></div>{notes}</section>"
    )


def leaderboard_section(report: dict[str, Any]) -> str:
    board = report.get("leaderboard")
    if not board:
        return ""
    rows = []
    for x in board["entries"]:
        mine = board["this_run"] in x["run_ids"]
        low = ' <span class="tag low">low</span>' if x["low_coverage"] else ""
        best = x["best_run"]
        link = f'<a href="../{esc(best)}/report.html"><code>{esc(best)}</code></a>'
        mark = ' class="this-run"' if mine else ""
        rows.append(
            f'<tr{mark} data-model="{esc(x["model"])}"><td>{esc(x["rank"])}</td>'
            f"<td>{esc(x['model'])}{' (this run)' if mine else ''}</td><td>{esc(x['prompts'])}</td>"
            f"<td>{esc(fmt(x['score']))}</td><td>{esc(x['items_covered'])}/{esc(x['dataset_items'])}{low}</td>"
            f"<td>{esc(fmt(x['tokens_total'], 6))}</td><td>{esc(fmt(x['cost_usd_total'], 4))}</td>"
            f"<td>{esc(x['runs'])}</td><td>{link}</td></tr>"
        )
    direction = "lower" if board["direction"] == "lower" else "higher"
    return (
        f'<section id="leaderboard"><h2>Leaderboard of {esc(board["experiment"])} by {esc(board["metric"])} '
        f"({direction} is better)</h2>"
        '<p class="note">One entry per model and prompt version over every valid run of the experiment, computed '
        "when this page was written: each item counts once with its best score; “low” marks an entry covering "
        f"less than {board['min_coverage']:.0%} of the dataset (not comparable, ranked last); tokens and cost are "
        "totals over the entry's runs; the link opens the run covering most items."
        "</p>"
        '<div class="table-wrap"><table class="grid leaderboard"><thead><tr><th>#</th><th>model</th><th>prompt</th>'
        "<th>best per item</th>"
        "<th>items</th><th>tokens</th><th>cost USD</th><th>runs</th><th>run</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )
