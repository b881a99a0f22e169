"""A slice gate's table at 80 columns without a TTY: a number range (`[-0.375, +1.31]`) is never split across lines."""

from __future__ import annotations

import io
import re

from rich.console import Console

from scoregate.cli.gate_view import print_slice_table
from scoregate.store.record import GateResult


def test_a_slice_row_at_80_columns_keeps_its_interval_on_one_line() -> None:
    row = {"field": "feed_category", "value": "security", "n": 12, "status": "too_small", "margin": 0.5,
           "verdict": "inconclusive", "diff": 0.47, "ci_low": -0.375, "ci_high": 1.31, "ci_level": 0.95,
           "p_holm": 0.0123}  # fmt: skip
    gate = GateResult(name="no_regression_by_feed", status="pass", slices=[row])
    console = Console(file=io.StringIO(), width=80, color_system=None, force_terminal=False)

    print_slice_table(console, gate)

    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Holm CI of Δ [-0.375, +1.31] 95.0%" in text, text  # whole, on one line
    assert not re.search(r"\[[-+][\d.]+,\s*$", text, re.MULTILINE), text
    assert all(len(line) <= 80 for line in text.splitlines()), text
