"""The scale bench's markdown table: each command's peak RSS and time per size, and the ratios to the reference."""

from __future__ import annotations

from typing import Any


def _cell(m: dict[str, Any] | None) -> str:
    if m is None:
        return "—"
    first = f", first line {m['first_line_s']:.2f} s" if m.get("first_line_s") is not None else ""
    if m.get("repeats"):
        first += " (" + " / ".join(f"{r['first_line_s']:.2f}" for r in m["repeats"]) + " s)"
    tree = m.get("tree_peak_rss_mb")
    together = f" ({tree:.0f} MB with its children)" if tree and m.get("tree_processes_at_peak", 1) > 1 else ""
    return f"{m['peak_rss_mb']:.0f} MB{together}, {m['wall_s']:.1f} s{first}"


def markdown(report: dict[str, Any]) -> str:
    """Return the results as a short markdown page."""
    sizes = report["sizes"]
    names = list(dict.fromkeys(name for commands in sizes.values() for name in commands))
    ref = str(min(int(n) for n in sizes))
    lines = [
        "# scoregate at scale (`bench/scale.py`)",
        "",
        f"Recorded {report['date']}; commit {report['machine']['scoregate_commit']}; "
        f"{report['machine']['cpus']} CPUs shared with other work, load average "
        f"{report['machine']['loadavg_before'][0]} before and {report['machine']['loadavg_after'][0]} after "
        "(each command's own load before/after is in the JSON).",
        "",
        f"Reproduce: `{report['command']}`",
        "",
        f"MLflow's floor: a bare interpreter that imports MLflow's client and opens a new sqlite store peaks at "
        f"{report['mlflow_floor_mb']:.0f} MB (MLflow imports pandas, scipy, pyarrow, sqlalchemy, alembic, fastapi). "
        "The MLflow mirror runs in its own process: a cell gives the largest process (the command, or its MLflow "
        "worker) and, where a child ran, the peak of both together.",
        "",
        "| command | "
        + " | ".join(f"{int(n):,} items" for n in sizes)
        + " | "
        + " | ".join(f"ratio {int(n):,}/{int(ref):,} (RSS, time)" for n in sizes if n != ref)
        + " |",
        "| --- | " + " | ".join("--:" for _ in sizes) + " | " + " | ".join("--:" for n in sizes if n != ref) + " |",
    ]
    for name in names:
        cells = [_cell(sizes[n].get(name)) for n in sizes]
        ratio_cells = []
        for n in sizes:
            if n == ref:
                continue
            r = report["ratios"].get(n, {}).get(name)
            ratio_cells.append("—" if r is None else f"{r['peak_rss']:.2f}×, {r['wall']:.0f}×")
        lines.append(f"| `{name}` | " + " | ".join(cells) + " | " + " | ".join(ratio_cells) + " |")
    v = report["verdicts"]
    lines += [
        "",
        f"Targets at {v['size']:,} items: every command under {v['rss_limit_mb']:.0f} MB — largest peak "
        f"{v['largest_peak_rss_mb']:.0f} MB (`{v['largest_peak_command']}`): "
        f"{'holds' if v['rss_holds'] else 'does not hold'}"
        + (
            f"; the largest tree (a command and its children together) {v['largest_tree_rss_mb']:.0f} MB "
            f"(`{v['largest_tree_command']}`): {'under' if v['tree_rss_holds'] else 'over'} {v['rss_limit_mb']:.0f} MB"
            if v.get("largest_tree_rss_mb") is not None
            else ""
        )
        + (
            f"; `runs show --items` first line in under {v['first_page_limit_s']:.0f} s — "
            f"{v['show_items_first_line_s']} s: {'holds' if v['first_page_holds'] else 'does not hold'}"
            if v["show_items_first_line_s"] is not None
            else "; `runs show` not measured"
        )
        + (
            f"; every item listed in under {v['listing_limit_s']:.0f} s — "
            + ", ".join(f"`{name}` {wall:.1f} s" for name, wall in v["listings_s"].items())
            + f": {'holds' if v['listings_hold'] else 'does not hold'}"
            if v.get("listings_s")
            else ""
        )
        + ".",
        "",
        *(f"Note: {note}" for note in report.get("notes", [])),
        "",
        "Setup: " + "; ".join(f"{k}: {v}" for k, v in report["config"].items() if k != "sizes") + ".",
        "",
    ]
    return "\n".join(lines)
