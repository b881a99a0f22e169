"""A judge score's corrected mean as the report shows it, under the raw mean in the score table."""

from __future__ import annotations

from typing import Any

from scoregate.report.charts import fmt
from scoregate.report.html_text import esc


def corrected_line(stats: dict[str, Any]) -> str:
    """`<div class="corrected">corrected 2.75 [2.27, 3.23] (PPI++, 12 labels)</div>`, the null reason, or ``."""
    corrected = stats.get("corrected")
    if not isinstance(corrected, dict):
        return ""
    title = "bias-corrected by the judge's calibration set"
    if corrected.get("value") is None:
        text = f"corrected: null ({corrected.get('reason') or 'not computed'})"
        return f'<div class="why" title="{esc(title)}">{esc(text)}</div>'
    method = corrected.get("method_name") or corrected.get("method")
    interval = f"[{fmt(corrected.get('ci_low'))}, {fmt(corrected.get('ci_high'))}]"
    text = f"corrected {fmt(corrected['value'])} {interval} ({method}, {corrected.get('n_labels')} labels)"
    return f'<div class="corrected" title="{esc(title)}">{esc(text)}</div>'


def corrected_difference_cell(score: dict[str, Any]) -> str:
    """`<div class="corrected">corrected Δ -0.242 [-0.45, -0.033] (sensitivity/specificity, 40 labels): worse</div>`
    under a compared score's raw Δ interval, the null reason, or `` when the corrected estimate was not asked."""
    c = score.get("corrected")
    if not isinstance(c, dict):
        return ""
    title = "the paired difference of pass rates corrected for the judge's bias by its calibration set"
    if c.get("value") is None:
        text = f"corrected Δ: null ({c.get('reason') or 'not computed'})"
        return f'<div class="why" title="{esc(title)}">{esc(text)}</div>'
    value = f"{c['value']:+.3g}"
    interval = f"[{c['ci_low']:+.3g}, {c['ci_high']:+.3g}]"
    text = f"corrected Δ {value} {interval} ({c.get('method_name')}, {c.get('n_labels')} labels): {c.get('verdict')}"
    return f'<div class="corrected" title="{esc(title)}">{esc(text)}</div>'
