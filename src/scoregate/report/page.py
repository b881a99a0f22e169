"""Render the report model (`data.build_report`) as one self-contained HTML page.

The summary parts (header, verdict, headline metrics, gates, charts, comparison, ranking, track sections) are
rendered here as HTML and inline SVG, so they read without JavaScript; the item table is drawn by the
page's own script from the embedded JSON (sorting, filtering, opening an item). Nothing is fetched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

from scoregate.analysis.null_reasons import shared_and_own
from scoregate.analysis.regression import REGRESSION_STAT as PAIRED_STAT
from scoregate.report.cascade_view import cascade_section
from scoregate.report.charts import bars, fmt, histogram
from scoregate.report.corrected_view import corrected_line
from scoregate.report.gate_extras import flaky_section, judge_drift_section, slice_tables
from scoregate.report.html_text import esc, run_metric_text
from scoregate.report.live_judges_view import live_judges_section
from scoregate.report.several_runs import comparison_section, leaderboard_section, ranking_section

STATUS_CLASS = {"pass": "ok", "fail": "bad", "incomplete": "warn", "no_gates": "dim"}


def _asset(name: str) -> str:
    return (resources.files("scoregate.report") / "assets" / name).read_text(encoding="utf-8")


def _pct(value: Any) -> str:
    return "—" if value is None else f"{float(value):.0%}"


def _arrow(direction: str | None) -> str:
    if direction is None:
        return ""
    return (
        '<span title="higher is better">↑</span>' if direction == "higher" else '<span title="lower is better">↓</span>'
    )


def _ci(stats: dict[str, Any]) -> str:
    if stats.get("ci_low") is None:
        return "—"
    return f"[{fmt(stats['ci_low'])}, {fmt(stats['ci_high'])}]"


def _letter(position: int) -> str:
    return chr(ord("A") + position) if position < 26 else str(position + 1)


def _run_label(run: dict[str, Any], position: int, count: int) -> str:
    if count == 1:
        return str(run["run_id"])
    return f"{_letter(position)}: {run.get('label') or run['model']}"


def _hash(run: dict[str, Any]) -> str:
    return str(run["dataset_hash"])[:12]


def _meta(run: dict[str, Any]) -> str:
    prompts = ", ".join(f"{n}@{v}" for n, v in run["prompts"].items()) or "—"
    rows = [
        ("run", run["run_id"]),
        ("experiment", f"{run['experiment']}" + (f" (project {run['project']})" if run.get("project") else "")),
        ("model", f"{run['model']} ({run.get('model_id') or '—'})"),
        ("judge model", run.get("judge_model")),
        ("prompt versions", prompts),
        ("dataset", f"{run['dataset']} ({run.get('dataset_items') or '—'} items) · hash {_hash(run)}"),
        ("items in this run", _run_items(run)),
        ("when", f"{run.get('started_at') or '—'} → {run.get('finished_at') or '—'}"),
        ("scoregate", f"{run.get('tool_version') or '—'} · git {str(run.get('git_commit') or '—')[:10]}"),
    ]
    return '<dl class="meta">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows) + "</dl>"


def _run_items(run: dict[str, Any]) -> str:
    """How many items the run holds, of how many the dataset has, and its --limit when it had one."""
    of = f" of {run['dataset_items']}" if run.get("dataset_items") not in (None, run["items"]) else ""
    return f"{run['items']}{of}" + (f" (--limit {run['limit']})" if run.get("limit") is not None else "")


def _header(report: dict[str, Any]) -> str:
    runs = report["runs"]
    first = runs[0]
    if len(runs) == 1:
        title = f"{first['experiment']} · {first['model']}"
    else:
        title = f"{first['experiment']} · {len(runs)} runs: " + " vs ".join(str(r.get("label")) for r in runs)
    parts = [f"<h1>{esc(title)}</h1>", '<div class="verdicts">']
    for i, run in enumerate(runs):
        cls = STATUS_CLASS.get(str(run["verdict"]), "dim")
        label = "" if len(runs) == 1 else f"<b>{esc(_run_label(run, i, len(runs)))}</b> "
        parts.append(
            f'<p class="verdict {cls}" data-run="{esc(run["run_id"])}" id="verdict-{i}">'
            f"{label}{esc(run['verdict_words'])}</p>"
        )
        if run.get("stop_early"):  # a stop-early run: where it stopped, why, and the sequence's bounds
            parts.append(f'<p class="verdict stop" id="stop-early-{i}">{label}{esc(run["stop_early"])}</p>')
    headline = _comparison_headline(report)
    if headline:
        parts.append(f'<p class="verdict cmp" id="comparison-verdict">{esc(headline)}</p>')
    parts.append("</div>")
    if len(runs) == 1:
        parts.append(_meta(first))
    else:
        parts.append('<div class="metas">')
        for i, run in enumerate(runs):
            parts.append(f"<details{' open' if len(runs) <= 2 else ''}><summary>{esc(_run_label(run, i, len(runs)))}"
                         f" — {esc(run['run_id'])}</summary>{_meta(run)}</details>")  # fmt: skip
        parts.append("</div>")
    return "<header>" + "".join(parts) + "</header>"


def _comparison_headline(report: dict[str, Any]) -> str | None:
    c = report.get("comparison")
    if c:
        primary = {name: s for name, s in c["scores"].items() if s.get("primary", True)}
        by: dict[str, list[str]] = {}
        for name, s in primary.items():
            by.setdefault(s["verdict"], []).append(name)
        parts = [f"{verdict}: {', '.join(names)}" for verdict, names in by.items()]
        others = len(c["scores"]) - len(primary)
        rest = f" ({others} more scores, exploratory, in the table)" if others else ""
        return f"B vs A on {c['shared_items']} shared items — " + "; ".join(parts) + rest
    r = report.get("ranking")
    if r and r["runs"]:
        best = r["runs"][0]
        return (
            f"Best by {r['metric']} ({'higher' if r['higher_is_better'] else 'lower'} is better): {best['label']} "
            f"with {fmt(best['mean'])} [{fmt(best['ci_low'])}, {fmt(best['ci_high'])}]"
        )
    return None


def _headline(report: dict[str, Any]) -> str:
    runs = report["runs"]
    names = list(dict.fromkeys(s["name"] for run in runs for s in run["scores"]))
    by_run = [{s["name"]: s for s in run["scores"]} for run in runs]
    why_shared, why_own = zip(*(shared_and_own(b) for b in by_run), strict=True)  # a shared reason said once
    head = "".join(f"<th>{esc(_run_label(r, i, len(runs)))}</th>" for i, r in enumerate(runs))
    rows = []
    for name in names:
        first = next(b[name] for b in by_run if name in b)
        cells = []
        for i, b in enumerate(by_run):
            s = b.get(name)
            if s is None:
                cells.append("<td>—</td>")
                continue
            cov = esc(f"{s.get('n_measured', '—')}/{s.get('n_total', '—')}")
            if s["data_type"] in ("text", "categorical"):
                value = f'<span class="dim">({esc(s["data_type"])})</span>'
            else:
                value = f'<span class="mean">{esc(fmt(s.get("mean")))}</span> <span class="ci">{esc(_ci(s))}</span>'
                value += corrected_line(s)
            reasons = why_own[i].get(name)
            why = f'<div class="why">not measured: {esc(reasons)}</div>' if reasons else ""
            cells.append(
                f'<td data-run="{i}" data-score="{esc(name)}">{value} <span class="cov">{cov}</span>{why}</td>'
            )
        gated = ' <span class="tag">gated</span>' if first.get("gated") else ""
        arrow = _arrow(first["direction"]) if first["data_type"] in ("numeric", "boolean") else ""
        rows.append(f"<tr><th>{esc(name)} {arrow}{gated}</th>{''.join(cells)}</tr>")
    if any(why_shared):
        why = "".join(f'<td><div class="why">{"<br>".join(map(esc, lines))}</div></td>' for lines in why_shared)
        rows.append(f"<tr><th>not measured</th>{why}</tr>")
    metrics = []
    for label, key in (("success rate", "success_rate"), ("latency p50 ms", "latency_p50_ms"),
                       ("latency p95 ms", "latency_p95_ms"), ("latency p99 ms", "latency_p99_ms"),
                       ("cost USD", "cost_usd_total"), ("tokens in", "tokens_in_total"),
                       ("tokens out", "tokens_out_total"), ("retries", "retries_total"),
                       ("failed items", "error_count")):  # fmt: skip
        tds = "".join(
            f'<td data-run="{i}" data-metric="{key}">{esc(run_metric_text(key, r["run_metrics"].get(key)))}</td>'
            for i, r in enumerate(runs)
        )
        metrics.append(f"<tr><th>{esc(label)}</th>{tds}</tr>")
    return (
        '<section id="headline"><h2>Headline metrics</h2>'
        '<p class="note">mean, 95% CI in brackets, coverage = measured/total items; gated scores first; '
        "↑ higher is better, ↓ lower is better (from the evaluator files and gates; · or no arrow: no direction).</p>"
        + _item_sets_note(report)
        + '<div class="table-wrap"><table class="grid headline">'
        f"<thead><tr><th>score</th>{head}</tr></thead><tbody>{''.join(rows)}"
        f'<tr class="sep"><th colspan="{len(runs) + 1}">run</th></tr>{"".join(metrics)}</tbody></table></div>'
        "</section>"
    )


def _item_sets_note(report: dict[str, Any]) -> str:
    """A warning when the runs' columns are means over different items (a --limit run beside a full one)."""
    runs = report["runs"]
    counts = [r["items"] for r in runs]
    shared = (report.get("comparison") or {}).get("shared_items")
    missing = any(row is None for item in report["items"] for row in item["r"])
    if len(runs) < 2 or (len(set(counts)) == 1 and shared in (None, counts[0]) and not missing):
        return ""
    each = ", ".join(f"{_letter(i)} {n}" for i, n in enumerate(counts))
    paired = (
        f"; the Comparison section's means are over the {shared} items both runs have" if shared is not None else ""
    )
    return (
        f'<p class="warn" id="item-sets">The runs cover different items ({esc(each)}): each column is over its own '
        f"run's items, so its means are not comparable side by side{esc(paired)}.</p>"
    )


def _gates(report: dict[str, Any]) -> str:
    runs = report["runs"]
    if not any(r["gates"] for r in runs):
        return '<section id="gates"><h2>Gates</h2><p class="note">No gates are set for this experiment.</p></section>'
    out = ['<section id="gates"><h2>Gates</h2>',
           '<p class="note">“items breaking” counts items whose own value breaks the rule '
           "(for a mean gate: the items pulling it down); click to list them in the item table. A paired gate "
           "(<code>paired_noninferiority</code>) judges the mean difference from its baseline, not each item: "
           "its count reads —.</p>"]  # fmt: skip
    for i, run in enumerate(runs):
        if not run["gates"]:
            continue
        if len(runs) > 1:
            out.append(f"<h3>{esc(_run_label(run, i, len(runs)))}</h3>")
        rows = []
        for k, g in enumerate(run["gates"]):
            rule = f"{g['stat']}({g['metric']}) {g['op']} {fmt(g['threshold'])}"
            cls = STATUS_CLASS.get(g["status"], "dim")
            broken = (
                "—" if g["stat"] == PAIRED_STAT else
                f'<a href="#items" class="gate-link" data-run="{i}" data-gate="{k}">{esc(g["broken"])}</a>'
                if g["broken"] else "0"
            )  # fmt: skip
            rows.append(
                f'<tr><td>{esc(g["name"])}</td><td class="{cls}">{esc(g["verdict"])}</td>'
                f"<td><code>{esc(rule)}</code></td><td>{esc(fmt(g['observed'], 4))}</td>"
                f'<td>{_pct(g.get("coverage"))}</td><td>{broken}</td><td class="wrap">{esc(g["detail"])}</td></tr>'
            )
        out.append(
            '<div class="table-wrap"><table class="grid gates"><thead><tr><th>gate</th><th>status</th><th>rule</th>'
            "<th>observed</th><th>coverage</th><th>items breaking</th><th>detail</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    return "".join(out) + "</section>"


def _distributions(report: dict[str, Any]) -> str:
    runs = report["runs"]
    out = ['<section id="distributions"><h2>Distributions</h2>']
    for i, (run, dist) in enumerate(zip(runs, report["distributions"], strict=True)):
        charts = []
        m = run["run_metrics"]
        marks = {"p50": m.get("latency_p50_ms"), "p95": m.get("latency_p95_ms"), "p99": m.get("latency_p99_ms")}
        charts.append(histogram(dist["latencies"], label="task latency ms", marks=marks))
        costs = [c for c in dist["costs"] if c is not None]
        if any(costs):  # all zero (a free model): the note says so, a chart of one bar at 0 would not
            charts.append(histogram(dist["costs"], label="cost per item USD"))
        scales = {s["name"]: s.get("scale") for s in run["scores"]}
        for name, values in dist["values"].items():
            scale = scales.get(name)
            charts.append(histogram(values, label=name, scale=(scale[0], scale[1]) if scale else None))
        cost = m.get("cost_usd_total")
        cost_line = (
            _free_line(len(costs), len(dist["costs"]))
            if costs and not any(costs) and not cost else
            f"cost {fmt(cost, 4)} USD in total, {fmt(cost / m['items'], 3)} per item"
            if cost is not None and m.get("items") else
            f"cost unknown: {(m.get('null_reasons') or {}).get('cost', 'no price set')}"
        )  # fmt: skip
        body = '<div class="charts">' + "".join(f'<figure class="fig">{c}</figure>' for c in charts if c) + "</div>"
        title = _run_label(run, i, len(runs))
        opened = " open" if i == 0 else ""
        out.append(
            f'<details{opened}><summary>{esc(title)}</summary><p class="note">{esc(cost_line)}</p>{body}</details>'
        )
    return "".join(out) + "</section>"


def _free_line(priced: int, items: int) -> str:
    """The cost note of a run whose every priced item cost 0 USD."""
    each = "the one item" if priced == 1 else f"each of the {priced} items"
    known = "" if priced == items else f" with a known cost; {items - priced} unknown"
    return f"free model: no cost (0 USD for {each}{known})"


def _track_section(report: dict[str, Any], name: str) -> str:
    """One track's section: per run holding the track, its note, values, charts and tables (`Track.report_view`)."""
    runs = [(i, r) for i, r in enumerate(report["runs"]) if (r.get("tracks") or {}).get(name)]
    if not runs:
        return ""
    out = [f'<section id="{esc(name)}"><h2>{esc(runs[0][1]["tracks"][name]["title"])}</h2>']
    for i, run in runs:
        view = run["tracks"][name]
        note = "".join(f"<b>{esc(text)}</b>" if bold else esc(text) for text, bold in view["note"])
        charts = [bars(values, label=label, percent=percent) for values, label, percent in view["charts"]]
        title = _run_label(run, i, len(report["runs"]))
        out.append(
            f"<details{' open' if i == runs[0][0] else ''}><summary>{esc(title)}</summary>"
            f'<p class="note">{note}</p>'
            '<div class="table-wrap"><table class="grid"><tbody>'
            + "".join(f"<tr><th>{esc(k)}</th><td>{esc(fmt(v))}</td></tr>" for k, v in view["values"])
            + "</tbody></table></div>"
            + '<div class="charts">'
            + "".join(f'<figure class="fig">{c}</figure>' for c in charts if c)
            + "</div>"
            + "".join(_track_table(table) for table in view["tables"])
            + "</details>"
        )
    return "".join(out) + "</section>"


def _track_table(table: dict[str, Any]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in table["head"])
    rows = "".join(
        "<tr>" + "".join(f"<td>{esc(v if d is None else fmt(v, d))}</td>" for v, d in row) + "</tr>"
        for row in table["rows"]
    )
    return (
        f'<h3>{esc(table["title"])}</h3><div class="table-wrap"><table class="grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _json(value: Any) -> str:
    """Compact JSON safe inside a <script> element: every `<` is written `\\u003c`, so no `</script>` or `<!--`."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).replace("<", "\\u003c")


def _data_script(report: dict[str, Any]) -> Iterator[str]:
    """The report's data as a JSON script element, one item at a time (a 10,000-row table is never one string)."""
    head = {k: report[k] for k in ("runs", "clip_limit", "clipped")}
    yield '<script type="application/json" id="report-data">'
    yield _json(head)[:-1] + ',"items":['
    for index, item in enumerate(report["items"]):
        yield ("," if index else "") + _json(item)
    yield "]}</script>"


def render_page(report: dict[str, Any]) -> str:
    """Return the whole HTML document for a report model."""
    return "".join(render_page_parts(report))


def render_page_parts(report: dict[str, Any]) -> Iterator[str]:
    """Yield the HTML document for a report model in parts, to be written one after another."""
    runs = report["runs"]
    title = f"scoregate report — {' vs '.join(str(r['run_id']) for r in runs)}"
    notes = "".join(f'<p class="warn">{esc(n)}</p>' for n in report["notes"])
    nav = [("headline", "Metrics"), ("gates", "Gates"), ("distributions", "Distributions")]
    if report.get("comparison"):
        nav.append(("comparison", "Comparison"))
    if report.get("ranking"):
        nav.append(("ranking", "Ranking"))
    if report.get("leaderboard"):
        nav.append(("leaderboard", "Leaderboard"))
    sections = {name: _track_section(report, name) for name in report.get("track_titles") or {}}
    nav += [(name, report["track_titles"][name]) for name, section in sections.items() if section]
    nav.append(("items", "Items"))
    clipped = (
        f" Texts longer than {report['clip_limit']:,} characters are cut ({report['clipped']:,} cut); "
        "results.jsonl holds them whole."
        if report["clipped"] else ""
    )  # fmt: skip
    body = (
        _header(report) + notes
        + '<nav>' + "".join(f'<a href="#{k}">{v}</a>' for k, v in nav) + "</nav>"
        + _headline(report) + _gates(report) + slice_tables(report) + flaky_section(report)
        + judge_drift_section(report) + live_judges_section(report) + cascade_section(report)
        + _distributions(report) + comparison_section(report) + ranking_section(report)
        + leaderboard_section(report) + "".join(sections.values())
        + '<section id="items"><h2>Items</h2><div id="item-controls"></div>'
        f'<p class="note" id="item-count"></p><div id="item-table"></div><p class="note">{esc(clipped)}</p></section>'
        f'<footer>generated {esc(report["generated_at"])} by scoregate</footer>'
    )  # fmt: skip
    yield (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,"><title>{esc(title)}</title><style>{_asset("report.css")}</style></head>'
        f"<body>{body}"
    )
    yield from _data_script(report)
    yield f"<script>{_asset('report.js')}</script></body></html>"
