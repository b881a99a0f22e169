"""The terminal view of what a gate table does not hold: slice tables of slice gates, flaky items and their history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scoregate.cli.layout import join_units, keep, print_table, print_wrapped, signed
from scoregate.support.console import escape

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.store.record import GateResult, RunSummary

SLICE_STYLE = {"pass": ("green", "PASS"), "fail": ("red", "FAIL"), "too_small": ("yellow", "TOO SMALL")}
SHOWN_FLAKY = 10


def print_slice_table(console: Console, gate: GateResult) -> None:
    """Print one slice gate's table: slice, n, status, verdict, Δ and its Holm CI, Holm p."""
    from rich.table import Table

    slices = gate.slices or []
    margin = slices[0].margin or 0
    title = f"slices of {gate.name} (Δ = candidate − reference; Holm across slices; fails below −{margin:g})"
    table = Table(title=escape(title), title_justify="left")
    for header, justify in (("slice", "left"), ("n", "right"), ("status", "left"), ("verdict", "left"),
                            ("Δ", "right"), ("Holm CI of Δ", "right"), ("p Holm", "right")):  # fmt: skip
        table.add_column(header, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for s in slices:
        status = str(s.status)
        style, word = SLICE_STYLE.get(status, ("dim", status))
        ci = "—" if s.ci_low is None else f"[{signed(s.ci_low)}, {signed(s.ci_high)}] {s.ci_level or 0:.1%}"
        p = "—" if s.p_holm is None else f"{s.p_holm:.3g}"
        table.add_row(
            escape(s.name), str(s.n), f"[{style}]{word}[/]", escape(s.verdict or "—"),
            signed(s.diff), ci, p,
        )  # fmt: skip
    print_table(console, table)


def flaky_line(summary: RunSummary) -> str | None:
    """One line naming the flaky items kept out of the every_item gates, or None when there are none."""
    flaky = summary.flaky
    if flaky is None or not flaky.items:
        return None
    items = flaky.items
    named = [keep(f"{i.item_id} ({i.gate}, {i.flips}/{i.comparisons} flips)") for i in items]
    more = f", … (+{len(named) - SHOWN_FLAKY} more)" if len(named) > SHOWN_FLAKY else ""
    return (
        f"flaky: {len(items)} item verdict(s) flip between runs and repeats (rate above {flaky.threshold or 0:.0%} "
        f"over {flaky.runs} run(s)), kept out of the every_item gates: {', '.join(named[:SHOWN_FLAKY])}{more}; "
        f"`scoregate runs show {summary.run_id} --flaky` shows their history"
    )


def print_gate_notes(console: Console, summary: RunSummary, every_item_note: str) -> None:
    """Print, under the gate table, the every_item note, each slice table and the flaky items."""
    gates = summary.gates
    if any(g.stat == "every_item" for g in gates):
        print_wrapped(console, every_item_note)
    for gate in gates:
        if gate.slices:
            print_slice_table(console, gate)
    line = flaky_line(summary)
    if line:
        print_wrapped(console, line, style="yellow")


def print_flaky_history(console: Console, flaky: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> None:
    """Print each flaky item with its figures and its history, oldest observation first."""
    rule = f"flip rate above {flaky['threshold']:.0%}, at least {flaky['min_observations']} observations"
    print_wrapped(console, join_units([f"{len(items)} flaky item(s)", rule, f"{flaky['runs']} run(s) read"]))
    for item in items:
        head = f"{item['item_id']}  gate {item['gate']} ({item['metric']})"
        print_wrapped(
            console, join_units([head, f"{item['flips']}/{item['comparisons']} flips ({item['flip_rate']:.0%})"])
        )
        for h in item["history"]:
            repeat = f" repeat {h['repeat']}" if h["repeat"] != 1 else ""
            when = join_units(
                [f"{h['run_id']}{repeat}", f"{h['verdict']} ({h['value']:g})", f"conditions {h['conditions']}"]
            )
            print_wrapped(console, when, first="  ", indent="    ")


def print_run_flaky(console: Console, summary: RunSummary | None) -> None:
    """`runs show RUN --flaky`: the run's flaky items with their history, or why there are none."""
    flaky = summary.flaky if summary is not None else None
    if summary is None:
        print_wrapped(console, "no summary yet: the flaky check runs when the run is summarised (resume it)")
    elif flaky is None:
        print_wrapped(console, "no flaky check in this run: its experiment has no every_item gate (or it predates it)")
    elif not flaky.items:
        rule = f"flip rate above {flaky.threshold or 0:.0%}, at least {flaky.min_observations} observations"
        print_wrapped(console, f"no flaky items ({rule}) over {flaky.runs} run(s) of {flaky.experiment}")
    else:
        block = flaky.to_dict()
        print_flaky_history(console, block, block["items"])
