"""Medians, ratios and target verdicts of a bench run, written as JSON and as a short markdown table."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from harnesses import HARNESSES, OPTIONAL_HARNESSES, Measurement

RAW_TARGET = 0.9
RSS_LIMIT_MB = 300.0
# Issue 12's targets.
ITEMS_TARGET = 0.95
WHOLE_TARGET = 0.9
STARTUP_LIMIT_S = 0.6
BIG_RSS_TARGET_MB = 150.0
HELP_LIMIT_S = 0.4
FIRST_REQUEST_LIMIT_S = 0.3
AFTER_ITEMS_LIMIT_S = 0.3
WHOLE_TARGET_ISSUE26 = 0.95


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def medians(measurements: list[Measurement]) -> dict[str, dict[str, Any]]:
    """Return, per harness, the median of each figure over its repeats (and the per-repeat rates)."""
    out: dict[str, dict[str, Any]] = {}
    for harness in HARNESSES + OPTIONAL_HARNESSES:
        runs = [m for m in measurements if m.harness == harness]
        if not runs:
            continue
        row: dict[str, Any] = {
            "repeats": len(runs),
            "items_per_s": _median([m.items_per_s for m in runs]),
            "whole_per_s": _median([m.whole_per_s for m in runs]),
            "peak_rss_mb": _median([m.peak_rss_mb for m in runs]),
            "cpu_ms_per_item": _median([m.cpu_ms_per_item for m in runs]),
            "items_cpu_ms_per_item": _median([m.items_cpu_ms_per_item for m in runs]),
            "items_phase_s": _median([m.items_phase_s for m in runs]),
            "wall_s": _median([m.wall_s for m in runs]),
            "all_items_per_s": [round(m.items_per_s, 1) for m in runs],
            "all_whole_per_s": [round(m.whole_per_s, 1) for m in runs],
            "all_ok": all(m.n_ok == m.n_items for m in runs),
        }
        if harness == "scoregate":
            row["startup_s"] = _median([m.detail["startup_s"] for m in runs])
            row["first_item_s"] = _median([m.detail["first_item_s"] for m in runs])
            row["first_request_s"] = _median([m.detail["first_request_s"] for m in runs])
            row["after_items_s"] = _median([m.detail["after_items_s"] for m in runs])
        out[harness] = row
    return out


def _paired(measurements: list[Measurement], other: str, attr: str) -> float | None:
    """Median over repeats of scoregate/other, each repeat compared with its own interleaved neighbour."""
    ratios = []
    for rep in sorted({m.rep for m in measurements}):
        by = {m.harness: m for m in measurements if m.rep == rep}
        if "scoregate" in by and other in by:
            ratios.append(getattr(by["scoregate"], attr) / getattr(by[other], attr))
    return _median(ratios) if ratios else None


def ratios(measurements: list[Measurement], table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return scoregate/raw and scoregate/langfuse on the items phase (judged) and on the whole command."""
    sg = table["scoregate"]
    out: dict[str, Any] = {}
    for other, key in (("raw_httpx", "raw"), ("langfuse_notrace", "langfuse")):
        if other not in table:
            continue
        out[f"scoregate/{key}"] = {
            "items_phase": round(sg["items_per_s"] / table[other]["items_per_s"], 3),
            "whole_command": round(sg["whole_per_s"] / table[other]["whole_per_s"], 3),
            "items_phase_paired_median": _paired(measurements, other, "items_per_s"),
        }
    return out


def verdicts(
    ratio: dict[str, Any],
    big: dict[str, Any] | None,
    scoregate: dict[str, Any] | None = None,
    startup: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return each target with its measured value and whether it holds."""
    out: dict[str, Any] = {}
    if "scoregate/raw" in ratio:
        value = ratio["scoregate/raw"]["items_phase"]
        out["scoregate >= 0.9 x raw loop (items phase)"] = {"value": value, "holds": value >= RAW_TARGET}
        out["scoregate >= 0.95 x raw loop (items phase)"] = {"value": value, "holds": value >= ITEMS_TARGET}
        whole = ratio["scoregate/raw"]["whole_command"]
        out["scoregate >= 0.9 x raw loop (whole command)"] = {"value": whole, "holds": whole >= WHOLE_TARGET}
        out["scoregate >= 0.95 x raw loop (whole command)"] = {"value": whole, "holds": whole >= WHOLE_TARGET_ISSUE26}
    if "scoregate/langfuse" in ratio:
        value = ratio["scoregate/langfuse"]["items_phase"]
        out["scoregate > langfuse runner (items phase)"] = {"value": value, "holds": value > 1.0}
    if scoregate is not None:
        value = scoregate["first_item_s"]
        out["scoregate time before the first item < 0.6 s"] = {"value": value, "holds": value < STARTUP_LIMIT_S}
        value = scoregate["first_request_s"]
        out["scoregate launch to the first request < 0.3 s"] = {"value": value, "holds": value < FIRST_REQUEST_LIMIT_S}
        value = scoregate["after_items_s"]
        out["scoregate after the last item < 0.3 s"] = {"value": value, "holds": value < AFTER_ITEMS_LIMIT_S}
    if big is not None:
        value = big["peak_rss_mb"]
        out[f"{big['n_items']}-item run peak RSS < 300 MB"] = {"value": value, "holds": value < RSS_LIMIT_MB}
        out[f"{big['n_items']}-item run peak RSS < 150 MB"] = {"value": value, "holds": value < BIG_RSS_TARGET_MB}
    if startup is not None:
        typer_s = startup["import typer"]["median_s"]
        for name in ("scoregate --help", "scoregate --version"):
            value = startup[name]["median_s"]
            out[f"{name} < 0.4 s wall"] = {"value": value, "holds": value < HELP_LIMIT_S}
            out[f"{name} < 2 x `python -c 'import typer'` ({typer_s} s)"] = {
                "value": round(value / typer_s, 2),
                "holds": value < 2 * typer_s,
            }
    return out


def write_json(path: Path, report: dict[str, Any]) -> None:
    """Write the full report (config, machine, every run, medians, ratios, verdicts)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    """Return the short markdown summary of a report."""
    cfg, machine, table = report["config"], report["machine"], report["medians"]
    lines = [
        f"# scoregate throughput — {report['date']}",
        "",
        f"Machine: {machine['note']}. Mock: kit nginx+echo on 127.0.0.1:{cfg['port']} "
        f"({cfg['latency_ms']} ms per reply). {cfg['n']} items, concurrency {cfg['concurrency']}, "
        f"median of {cfg['repeats']} interleaved repeats. scoregate: `{cfg['scoregate_command']}` "
        "(store on, cache off, counters on, MLflow mirroring off).",
        "",
        "| harness | items/s (items phase) | items/s (whole command) | peak RSS MB | CPU ms/item (items phase) "
        "| CPU ms/item (whole) | per-repeat items/s (items phase) |",
        "| --- | --: | --: | --: | --: | --: | --- |",
    ]
    for harness, row in table.items():
        per_rep = ", ".join(_fmt(v) for v in row["all_items_per_s"])
        lines.append(
            f"| {harness} | {_fmt(row['items_per_s'])} | {_fmt(row['whole_per_s'])} | {_fmt(row['peak_rss_mb'])} "
            f"| {_fmt(row['items_cpu_ms_per_item'], 2)} | {_fmt(row['cpu_ms_per_item'], 2)} | {per_rep} |"
        )
    sg = table.get("scoregate")
    if sg:
        lines += [
            "",
            f"scoregate outside the items phase (medians): {sg['first_request_s']:.2f} s from launch to the first "
            f"request the endpoint receives (the models' one-token check), {sg['first_item_s']:.2f} s to the first "
            f"item's request ({sg['startup_s']:.2f} s to the run's start in its manifest: imports, project load, "
            "dataset scan and the models' one-token check), "
            f"{sg['after_items_s']:.2f} s after the last item (summary with bootstrap CIs, report, printing, exit).",
        ]
        raw = table.get("raw_httpx")
        if raw and raw["items_per_s"] and raw["whole_per_s"]:
            outside = cfg["n"] / raw["whole_per_s"] - cfg["n"] / raw["items_per_s"]
            lines.append(
                f"The raw httpx loop, for reference: {outside:.2f} s outside its items phase in all (interpreter "
                "start, imports, data loading, exit; it checks nothing before its first request)."
            )
    lines += [
        "",
        "| ratio | items phase (judged) | whole command | items phase, paired per repeat |",
        "| --- | --: | --: | --: |",
    ]
    for name, r in report["ratios"].items():
        lines.append(
            f"| {name} | {r['items_phase']:.3f} | {r['whole_command']:.3f} "
            f"| {_fmt(r['items_phase_paired_median'], 3)} |"
        )
    big = report.get("big_run")
    if big:
        lines += [
            "",
            f"Big run: {big['n_items']} items through `scoregate run` against port {big['port']} "
            f"({big['latency_ms']} ms, to keep it short): peak RSS {big['peak_rss_mb']:.1f} MB, "
            f"{big['items_per_s']:.1f} items/s (items phase), {big['wall_s']:.0f} s whole command, "
            f"{big['n_ok']}/{big['n_items']} scored.",
        ]
    startup = report.get("startup")
    if startup:
        lines += ["", "| startup command (median wall, interleaved) | s |", "| --- | --: |"]
        lines += [f"| `{name}` | {row['median_s']:.3f} |" for name, row in startup.items()]
    lines += ["", "| target | value | holds |", "| --- | --: | --- |"]
    for name, v in report["verdicts"].items():
        lines.append(f"| {name} | {v['value']} | {'yes' if v['holds'] else '**no**'} |")
    return "\n".join(lines) + "\n"
