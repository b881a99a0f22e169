"""The MLflow run's description (`mlflow.note.content`, shown as markdown on the run page): the verdict in
words, the gate table and the primary metrics, so a person reads the run without opening an artifact."""

from __future__ import annotations

from typing import Any

from scoregate.support.numbers import fmt

VERDICT_WORDS = {
    "pass": "**PASS** — every gate passed",
    "fail": "**FAIL** — at least one gate failed",
    "incomplete": "**INCOMPLETE** — a gate could not be judged (a metric not measured, or coverage too low)",
    "no_gates": "**No gates** are set for this experiment",
}
MAX_CHARS = 7500
"""MLflow keeps tags up to 8,000 characters; the description stops before that."""


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def primary_metrics(summary: dict[str, Any]) -> list[str]:
    """The scores a person looks at first: those the gates judge (in gate order), then the other numeric scores."""
    scores = summary.get("scores") or {}
    gated = [g["metric"] for g in summary.get("gates") or [] if g.get("metric") in scores]
    numeric = [k for k, s in scores.items() if s.get("data_type") in ("numeric", "boolean")]
    return list(dict.fromkeys([*gated, *numeric]))


def run_description(manifest: dict[str, Any], summary: dict[str, Any]) -> str:
    """Return the markdown description of a run: header, verdict, gates, primary metrics, run metrics."""
    receipts = manifest.get("receipts") or {}
    dataset = receipts.get("dataset") or {}
    model = receipts.get("model") or {}
    prompts = ", ".join(f"`{n}@{i.get('version')}`" for n, i in (receipts.get("prompts") or {}).items())
    lines = [
        f"### {summary.get('experiment')} · {model.get('name')} (`{model.get('model')}`)",
        "",
        VERDICT_WORDS.get(str(summary.get("verdict")), str(summary.get("verdict"))),
        "",
        f"dataset `{dataset.get('name')}` ({dataset.get('items')} items, "
        f"hash `{str(dataset.get('content_hash'))[:12]}`)"
        f" · prompts {prompts or '—'} · run `{manifest.get('run_id')}`",
    ]
    gates = summary.get("gates") or []
    if gates:
        lines += ["", "| gate | rule | observed | coverage | status |", "|---|---|---|---|---|"]
        for g in gates:
            rule = f"{g['stat']}({g['metric']}) {g['op']} {fmt(g['threshold'])}"
            coverage = "—" if g.get("coverage") is None else f"{g['coverage']:.0%}"
            status = g["status"].upper()
            lines.append(f"| {_cell(g['name'])} | `{_cell(rule)}` | {fmt(g['observed'])} | {coverage} | **{status}** |")
        broken = [g for g in gates if g.get("status") != "pass" and g.get("detail")]
        if broken:
            lines.append("")
            lines += [f"- gate {g['name']} {g['status']}: {g['detail']}" for g in broken]
    scores = summary.get("scores") or {}
    primary = primary_metrics(summary)
    if primary:
        lines += ["", "| score | mean | 95% CI | measured |", "|---|---|---|---|"]
        for key in primary[:12]:
            s = scores[key]
            ci = "—" if s.get("ci_low") is None else f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]"
            lines.append(f"| {_cell(key)} | {fmt(s.get('mean'))} | {ci} | {s.get('n_measured')}/{s.get('n_total')} |")
        if len(primary) > 12:
            lines.append(f"\n{len(primary) - 12} more score(s) in the metrics and in `summary.json`.")
    m = summary.get("run_metrics") or {}
    cost = m.get("cost_usd_total")
    lines += [
        "",
        f"items {m.get('items')} · failed {m.get('error_count')} · latency p50/p95 {fmt(m.get('latency_p50_ms'))}/"
        f"{fmt(m.get('latency_p95_ms'))} ms · cost {'unknown' if cost is None else f'${cost:.4f}'}",
        "",
        "The whole run: artifact `report.html` (opens in the browser), `summary.json`, `results.jsonl`.",
    ]
    text = "\n".join(lines)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 40] + "\n\n… (cut; see summary.json)"
