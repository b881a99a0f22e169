"""The report's slice tables (a regression gate's comparison per slice), flaky items with their history, judge drift."""

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


DRIFT_CLASS = {"ok": "ok", "calibrated": "ok", "drifted": "bad", "changed": "warn", "unknown": "warn"}


def _num(value: float | None, sign: str = "") -> str:
    """An agreement figure as `scoregate calibrate` prints it: three decimals (`sign="+"` shows the sign)."""
    return "—" if value is None else f"{value:{sign}.3f}"


def _drift_row(row: dict[str, Any]) -> str:
    drift = row.get("drift") or {}
    change = drift.get("change") or {}
    ci = "—" if change.get("ci_low") is None else f"[{_num(change['ci_low'], '+')}, {_num(change['ci_high'], '+')}]"
    return (
        f"<tr><td>{esc(row['judge'])}</td><td>{esc(row['score_key'])}</td>"
        f'<td class="{DRIFT_CLASS.get(row["status"], "dim")}">{esc(str(row["status"]).upper())}</td>'
        f"<td>{esc(drift.get('metric', 'spearman'))}</td><td>{_num(drift.get('calibrated', row.get('spearman')))}</td>"
        f"<td>{_num(drift.get('canary'))}</td><td>{_num(change.get('value'), '+')}</td><td>{esc(ci)}</td>"
        f"<td>{esc(drift.get('tolerance'))}</td><td>{esc(row.get('calibrated_at'))}</td>"
        f"<td>{esc(row.get('canary_run'))}</td><td>{esc(row.get('langfuse_definition') or '—')}</td>"
        f"<td>{esc(row.get('detail'))}</td></tr>"
    )


def judge_drift_section(report: dict[str, Any]) -> str:
    """Return each run's judges with a saved calibration: drift of their canary, or why there is none."""
    out = []
    for run in report["runs"]:
        rows = run.get("judge_drift") or []
        if not rows:
            continue
        out.append(
            f"<h3>Judges of {esc(run['run_id'])}: agreement with humans at calibration and at the latest canary; "
            "Δ = canary − calibration, paired bootstrap 95% CI</h3>"
            '<div class="table-wrap"><table class="grid drift"><thead><tr><th>judge</th><th>score</th>'
            "<th>status</th><th>metric</th><th>calibrated</th><th>canary</th><th>Δ</th><th>95% CI of Δ</th>"
            "<th>tolerance</th><th>calibrated at</th><th>canary run</th><th>Langfuse definition</th>"
            "<th>detail</th></tr></thead>"
            f"<tbody>{''.join(_drift_row(r) for r in rows)}</tbody></table></div>"
        )
    return f'<section id="judge-drift"><h2>Judge drift</h2>{"".join(out)}</section>' if out else ""
