"""The corrected judge means of a run as the terminal shows them, one line per judge score beside its raw mean."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoregate.cli.layout import keep, print_wrapped, signed
from scoregate.support.console import escape

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.store.record import RunSummary


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def corrected_lines(summary: RunSummary) -> list[str]:
    """Return `key: raw 4.333, corrected 2.753 [2.101, 3.405] (PPI++, 12 labels)` per corrected score, or its reason."""
    lines = []
    for key, stats in summary.scores.items():
        c = stats.corrected
        if c is None:
            continue
        raw = keep("raw", _num(stats.mean))
        if c.value is None:
            lines.append(f"{key}: {raw}, {keep('corrected', '—')}: {c.reason}")
            continue
        interval = keep(f"[{_num(c.ci_low)},", f"{_num(c.ci_high)}]")
        how = keep(f"({c.method_name or c.method},", f"{c.n_labels}", "labels)")
        lines.append(f"{key}: {raw}, {keep('corrected', _num(c.value))} {interval} {how}")
    return lines


def print_corrected(console: Console, summary: RunSummary) -> None:
    """Print the corrected means under the score table (nothing when no judge score has one)."""
    lines = corrected_lines(summary)
    if not lines:
        return
    level = next(
        (s.corrected.confidence for s in summary.scores.values() if s.corrected and s.corrected.confidence), 0.95
    )
    print_wrapped(console, f"corrected for the judge's bias by its calibration set ({level:.0%} interval):")
    for line in lines:
        print_wrapped(console, escape(line), first="  ", indent="    ")


def held_out_lines(check: dict[str, Any]) -> list[str]:
    """Return the held-out check as lines: the raw judge mean, the corrected one, the held-back human mean."""
    c = check["corrected"]
    method = c.get("method_name") or c["method"]
    lines = [f"raw judge mean {_num(check['raw_mean'])} over {check['n_run']} items (the run)"]
    if c["value"] is None:
        lines.append(f"corrected: — ({c['reason']})")
    else:
        interval = keep(f"[{_num(c['ci_low'])},", f"{_num(c['ci_high'])}]")
        level = f"{c['confidence']:.0%}"
        rates = c["details"] if c["method"] == "sensitivity-specificity" else {}
        judged = f", specificity {_num(rates['q0'])}, sensitivity {_num(rates['q1'])}" if rates else ""
        lines.append(f"corrected {_num(c['value'])} {interval} ({level}, {method}, {check['labels']} labels{judged})")
    where = {True: "inside the corrected interval", False: "OUTSIDE the corrected interval", None: "not compared"}
    human = f"human mean of those items (held back): {_num(check['human_mean'])}, {where[check['covered']]}"
    return [*lines, human + (f" ({check['n_human']} rated)" if check["n_human"] != check["n_run"] else "")]


def print_held_out(console: Console, check: dict[str, Any]) -> None:
    """Print the held-out check of the corrected mean under a calibration."""
    print_wrapped(
        console,
        f"corrected mean, checked: {check['labels']} random items rated by both (seed {check['seed']}) as the "
        "calibration set, the rest as the run:",
    )
    for line in held_out_lines(check):
        print_wrapped(console, escape(line), first="  ", indent="    ")


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def difference_lines(scores: dict[str, Any]) -> list[str]:
    """Return `key: raw Δ -0.133 [...] 95%, corrected Δ -0.242 [...] 95% (method, 40 labels): worse` per judge score
    of a comparison's `--json` scores with a corrected block, or the reason it has none."""
    lines = []
    for key, s in scores.items():
        c = s.get("corrected")
        if c is None:
            continue
        level = f"{s['ci_level']:.1%}".replace(".0%", "%")
        raw_ci = (
            ""
            if s["diff_ci_low"] is None
            else " " + keep(f"[{signed(s['diff_ci_low'])},", f"{signed(s['diff_ci_high'])}]", level)
        )
        raw = keep("raw", "Δ", signed(s["diff"])) + raw_ci
        if c["value"] is None:
            lines.append(f"{key}: {raw}, {keep('corrected', 'Δ', '—')}: {c['reason']}")
            continue
        interval = keep(
            f"[{_signed(c['ci_low'])},", f"{_signed(c['ci_high'])}]", f"{c['confidence']:.1%}".replace(".0%", "%")
        )
        how = keep(f"({c['method_name']},", f"{c['n_labels']}", "labels)")
        lines.append(f"{key}: {raw}, {keep('corrected', 'Δ', _signed(c['value']))} {interval} {how}: {c['verdict']}")
    return lines


def print_corrected_differences(console: Console, scores: dict[str, Any]) -> None:
    """Print each judge score's corrected paired difference under the comparison (nothing when none was asked)."""
    lines = difference_lines(scores)
    if not lines:
        return
    print_wrapped(
        console,
        "corrected for the judge's bias by its calibration set (paired difference of pass rates, B − A, at the "
        "raw interval's level; the verdict by the same rule):",
    )
    for line in lines:
        print_wrapped(console, escape(line), first="  ", indent="    ")
