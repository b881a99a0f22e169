"""Live progress of a run: done/total, items/s, ETA and failures."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from scoregate.records import ItemResult


class RunProgress:
    """A rich progress bar on a terminal; a line every 10% elsewhere (CI logs)."""

    def __init__(self, total: int, *, already_done: int = 0, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total = total
        self.done = already_done
        self.failed = 0
        self._started = time.monotonic()
        self._new = 0
        self._next_report = 0.1
        self.listeners: list[Callable[[ItemResult], None]] = []
        """Called with every finished result (the live progress files)."""
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.2f} items/s"),
            TimeRemainingColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            console=self.console,
            disable=not self.console.is_terminal,
            refresh_per_second=4,
        )
        self._task = self._bar.add_task("running", total=total, completed=already_done, rate=0.0, failed=0)

    def __enter__(self) -> RunProgress:
        self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._bar.stop()

    @property
    def rate(self) -> float:
        """Items finished per second in this session."""
        elapsed = time.monotonic() - self._started
        return self._new / elapsed if elapsed > 0 else 0.0

    def advance(self, failed: bool, result: ItemResult | None = None) -> None:
        """Count one finished item (and hand its result to the listeners)."""
        if result is not None:
            for listener in self.listeners:
                listener(result)
        self.done += 1
        self._new += 1
        self.failed += failed
        self._bar.update(self._task, completed=self.done, rate=self.rate, failed=self.failed)
        if not self.console.is_terminal and self.total and self.done / self.total >= self._next_report:
            self.console.print(f"  {self.done}/{self.total} items, {self.rate:.2f} items/s, {self.failed} failed")
            self._next_report += 0.1
