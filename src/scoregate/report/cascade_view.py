"""A cascade judge's figures in the report: the share its first judge kept, the guarantee and the cost saved, or
why each is null (summary.json `cascade`)."""

from __future__ import annotations

from typing import Any

from scoregate.report.html_text import esc


def cascade_words(name: str, block: dict[str, Any]) -> str:
    """One cascade judge of a run in words, its null figures with their reasons."""
    items = block.get("items")
    if block.get("threshold") is None:
        text = f"cascade {name}: null: {block.get('reason')}; the strong judge scored all {items} items"
    else:
        text = (
            f"cascade {name}: the first judge {block.get('first_model')} kept {block.get('kept')} of {items} items "
            f"({block.get('share_kept') or 0:.0%}, confidence >= {block['threshold']:g}); guaranteed "
            f"{block.get('guarantee')} ({block.get('calibration_labels')} labels)"
        )
    saved = block.get("cost_saved_usd")
    if saved is None:
        return f"{text}; cost saved: null ({block.get('cost_reason')})"
    priced = ", the strong judge priced as on its calibration" if block.get("cost_basis") else ""
    return (
        f"{text}; cost saved ${saved:.4f} ({block.get('cost_saved_share') or 0:.0%} of the strong judge alone{priced})"
    )


def cascade_section(report: dict[str, Any]) -> str:
    """The report's section of cascade judges, one line each per run, or "" when no run has one."""
    out = []
    for run in report["runs"]:
        blocks = run.get("cascade") or {}
        lines = "".join(f"<li>{esc(cascade_words(name, block))}</li>" for name, block in blocks.items())
        if lines:
            out.append(f"<h3>{esc(run['run_id'])}</h3><ul>{lines}</ul>")
    if not out:
        return ""
    note = (
        '<p class="note">From the run’s telemetry; the guarantee is the calibration’s '
        "(`scoregate cascade EVALUATOR --save`), stated for items drawn like its labelled ones.</p>"
    )
    return f'<section id="cascade"><h2>Judge cascade</h2>{note}{"".join(out)}</section>'
