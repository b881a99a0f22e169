"""The post-run step that warns when a regression gate's margin is below what the run can detect."""

from __future__ import annotations

from scoregate.app.run.finished_run import FinishedRun
from scoregate.support.console import lazy_console
from scoregate.support.terminal_text import print_wrapped

__all__ = ["gate_power"]


def gate_power(run: FinishedRun) -> None:
    """Warn for each regression gate whose margin is smaller than the run, paired with its reference, can detect."""
    if not any(getattr(gate, "margin", None) is not None for gate in run.plan.gates):
        return
    from scoregate.app.plan import gate_power_warnings

    console = run.console or lazy_console(stderr=True)
    for line in gate_power_warnings(run.project.root, run.store, run.plan.gates):
        print_wrapped(console, line, first="warning: ", first_style="yellow", indent="  ")
