"""The report's slice tables (a regression gate's comparison per slice) and its flaky items with their history."""

from __future__ import annotations

from typing import Any

from scoregate.report.charts import fmt
from scoregate.report.html_text import esc

SLICE_CLASS = {"pass": "ok", "fail": "bad", "too_small": "warn"}
SLICE_WORDS = {"pass": "PASS", "fail": "FAIL", "too_small": "TOO SMALL"}


def _slice_rows(gate: dict[str, Any]) -> str:
    rows = []
    for s in gate["slices"]:
        ci = "—" if s["ci_low"] is None else f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}] at {s['ci_level']:.1%}"
        rows.append(
            f"<tr><td>{esc(s['field'])}</td><td>{esc(s['value'])}</td><td>{s['n']}</td>"
            f'<td class="{SLICE_CLASS.get(s["status"], "dim")}">{SLICE_WORDS.get(s["status"], s["status"])}</td>'
            f"<td>{esc(s['verdict'])}</td><td>{esc(fmt(s['diff']))}</td><td>{esc(ci)}</td><td>{esc(fmt(s['p_holm']))}</td></tr>"
        )
    return "".join(rows)


def slice_tables(report: dict[str, Any]) -> str:
    """Return one table per slice gate of each run (empty when no gate has slices)."""
    out = []
    for run in report["runs"]:
        for gate in run.get("gates") or []:
            if not gate.get("slices"):
                continue
            margin = gate["slices"][0]["margin"]
            out.append(
                f"<h3>Slices of {esc(gate['name'])} ({esc(run['run_id'])}): Δ = candidate − reference, "
                f"CI Holm-adjusted across slices; a slice fails when its CI lies below −{fmt(margin)}</h3>"
                '<div class="table-wrap"><table class="grid slices"><thead><tr><th>field</th><th>slice</th><th>n</th>'
                "<th>status</th><th>verdict</th><th>Δ</th><th>Holm CI of Δ</th><th>p (Holm)</th></tr></thead>"
                f"<tbody>{_slice_rows(gate)}</tbody></table></div>"
            )
    return f'<section id="slices"><h2>Slices</h2>{"".join(out)}</section>' if out else ""


def flaky_section(report: dict[str, Any]) -> str:
    """Return the flaky items of each run with their history (empty when no run found any)."""
    out = []
    for run in report["runs"]:
        flaky = run.get("flaky") or {}
        if not flaky.get("items"):
            continue
        rows = []
        for item in flaky["items"]:
            history = " ".join(
                f"{h['verdict']}({fmt(h['value'])})" + (f"#r{h['repeat']}" if h["repeat"] != 1 else "")
                for h in item["history"]
            )
            rows.append(
                f"<tr><td><code>{esc(item['item_id'])}</code></td><td>{esc(item['gate'])}</td>"
                f"<td>{item['flips']}/{item['comparisons']} ({item['flip_rate']:.0%})</td>"
                f'<td class="wrap">{esc(history)}</td></tr>'
            )
        out.append(
            f'<section id="flaky"><h2>Flaky items ({esc(run["run_id"])})</h2><p class="warn">'
            f"{len(flaky['items'])} item verdict(s) flip between runs and repeats of {esc(run.get('experiment'))} "
            f"(flip rate above {flaky['threshold']:.0%} over {flaky['runs']} run(s)): kept out of the every_item "
            "gates, listed here, oldest observation first.</p>"
            '<div class="table-wrap"><table class="grid flaky"><thead><tr><th>item</th><th>gate</th><th>flips</th>'
            f"<th>history (verdict(value), #r = repeat)</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            "</section>"
        )
    return "".join(out)
