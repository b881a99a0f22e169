"""The live judges' scores of a run in the report: one row per score key and deployed evaluator version.

Scores of two evaluator versions are never pooled: a figure belongs to one version (the one Langfuse's rule ran
when it scored), so a judge promoted or rolled back in the middle of a run's traffic shows as two rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoregate.report.html_text import esc
from scoregate.store.live_judges import run_live_records


def live_judge_rows(root: Path, run_id: str) -> list[dict[str, Any]]:
    """Per (score key, evaluator version): the evaluator, how many traces it scored, and the mean, min and max of its
    numeric values (None when it wrote none)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in run_live_records(root, run_id):
        version = record.get("evaluator_version_id")
        if version:
            groups.setdefault((str(record.get("key")), str(version)), []).append(record)
    rows = []
    for (key, version), records in sorted(groups.items()):
        numbers = [float(r["value"]) for r in records if isinstance(r.get("value"), int | float)]
        rows.append(
            {
                "key": key,
                "evaluator_version_id": version,
                "evaluator_id": records[-1].get("evaluator_id"),
                "n": len(records),
                "mean": sum(numbers) / len(numbers) if numbers else None,
                "min": min(numbers) if numbers else None,
                "max": max(numbers) if numbers else None,
            }
        )
    return rows


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def live_judges_section(report: dict[str, Any]) -> str:
    """The report's section of live judge scores by evaluator version, or "" when no run has any."""
    out = []
    for run in report["runs"]:
        rows = run.get("live_judges") or []
        if not rows:
            continue
        body = "".join(
            f"<tr><td>{esc(r['key'])}</td><td>{esc(r['evaluator_version_id'])}</td><td>{esc(r['evaluator_id'])}</td>"
            f"<td>{r['n']}</td><td>{_num(r['mean'])}</td><td>{_num(r['min'])}</td><td>{_num(r['max'])}</td></tr>"
            for r in rows
        )
        out.append(
            f"<h3>Live judges on the traces of {esc(run['run_id'])}, by deployed evaluator version "
            "(`scoregate scores pull`; versions are never pooled)</h3>"
            '<div class="table-wrap"><table class="grid"><thead><tr><th>score</th><th>evaluator version</th>'
            "<th>evaluator</th><th>traces</th><th>mean</th><th>min</th><th>max</th></tr></thead>"
            f"<tbody>{body}</tbody></table></div>"
        )
    return f'<section id="live-judges"><h2>Live judges</h2>{"".join(out)}</section>' if out else ""
