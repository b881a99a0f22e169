"""Live progress of a run: done/total, items/s, elapsed, ETA and failures."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from scoregate.store.records import ItemResult


def clock_text(seconds: float | None) -> str:
    """Return a duration readably: `0.4 s`, `31.4 s` under a minute, then `2m05s`, `1h02m`; `—` when unknown."""
    if seconds is None:
        return "—"
    seconds = max(seconds, 0.0)
    if round(seconds, 1) < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}m"


def duration_text(seconds: float) -> str:
    """Return a forecast or budget duration: `clock_text`, but a figure under 0.05 s keeps two digits (`0.012 s`,
    never `0.0 s`)."""
    return f"{seconds:.2g} s" if 0 < seconds < 0.05 else clock_text(seconds)


def speed_text(rate: float) -> str:
    """Return the speed readably: `31.4 items/s` at an item a second or more, below it the seconds per item
    (`4.5 s/item`, `2m05s/item`: a slow run never reads `0.00 items/s`); `— s/item` before an item finished."""
    if rate >= 1:
        return f"{rate:.1f} items/s"
    return f"{clock_text(1 / rate)}/item" if rate > 0 else "— s/item"


class RunProgress:
    """A rich progress bar on a terminal; a line every 10% elsewhere (CI logs)."""

    def __init__(
        self,
        total: int,
        *,
        already_done: int = 0,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.total = total
        self.done = already_done
        self.failed = 0
        self._clock = clock
        self._started = clock()
        self._new = 0
        self._next_step = self._step(already_done) + 1
        self.listeners: list[Callable[[ItemResult], None]] = []
        """Called with every finished result (the live progress files)."""
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[speed]}"),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            console=self.console,
            disable=not self.console.is_terminal,
            refresh_per_second=4,
        )
        self._task = self._bar.add_task("running", total=total, completed=already_done, speed=speed_text(0.0), failed=0)

    def __enter__(self) -> RunProgress:
        self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._bar.stop()

    def _step(self, done: int) -> int:
        """Which tenth of the run `done` items reach (0-10)."""
        return done * 10 // self.total if self.total else 0

    @property
    def elapsed(self) -> float:
        """Seconds since this session of the run started."""
        return self._clock() - self._started

    @property
    def rate(self) -> float:
        """Items finished per second in this session."""
        elapsed = self.elapsed
        return self._new / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until every item is done at this session's rate; None until an item has finished."""
        if self.done >= self.total:
            return 0.0
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None

    def line(self) -> str:
        """The plain progress line for logs (under 80 columns): done/total, rate, failures, elapsed, ETA."""
        return (
            f"  {self.done}/{self.total} items · {speed_text(self.rate)} · {self.failed} failed"
            f" · elapsed {clock_text(self.elapsed)} · ETA {clock_text(self.eta)}"
        )

    def advance(self, failed: bool, result: ItemResult | None = None) -> None:
        """Count one finished item (and hand its result to the listeners)."""
        if result is not None:
            for listener in self.listeners:
                listener(result)
        self.done += 1
        self._new += 1
        self.failed += failed
        self._bar.update(self._task, completed=self.done, speed=speed_text(self.rate), failed=self.failed)
        step = self._step(self.done)
        if not self.console.is_terminal and step >= self._next_step:
            self.console.print(self.line(), soft_wrap=True, highlight=False)
            self._next_step = step + 1
