"""A fake clock and a plain (no TTY) console for progress and heartbeat tests."""

from __future__ import annotations

import io

from rich.console import Console


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, force_terminal=False, color_system=None), out
