"""Live progress of a run: done/total, items/s, elapsed, ETA and failures; a heartbeat line while it waits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Column
from rich.text import Text

from scoregate.store.records import ItemResult
from scoregate.support.figures import clock_text

if TYPE_CHECKING:
    from scoregate.calls.activity import CallActivity

HEARTBEAT_S = 30.0
"""Without a terminal, the seconds between two lines (`run --heartbeat`): at most one progress line per interval
(and the final one), and a heartbeat line when the run waited that long without one."""
ECHO_ROOM = 2
"""Columns the bar leaves free at the right: the terminal echoes Ctrl-C as `^C` after it, and a bar as wide as the
terminal would wrap that echo to a new line, leaving a second bar behind."""


def speed_text(rate: float, unit: str = "item") -> str:
    """Return the speed readably: `31.4 items/s` at an item a second or more, below it the seconds per item
    (`4.5 s/item`, `2m05s/item`: a slow run never reads `0.00 items/s`); `— s/item` before an item finished.
    `unit` names what is counted (`item run` for a repeated run)."""
    if rate >= 1:
        return f"{rate:.1f} {unit}s/s"
    return f"{clock_text(1 / rate)}/{unit}" if rate > 0 else f"— s/{unit}"


class _Clock(ProgressColumn):
    """`elapsed 4m31s · ETA 2m05s` in the bar, read from the run's own counts (the log line's words and clock)."""

    def __init__(self, progress: RunProgress, table_column: Column | None = None) -> None:
        super().__init__(table_column)
        self._progress = progress

    def render(self, task: Task) -> Text:
        """The clock text for the bar."""
        return Text(f"elapsed {clock_text(self._progress.elapsed)} · ETA {clock_text(self._progress.eta)}")


class _Narrower:
    """A renderable drawn ECHO_ROOM columns narrower than the space it is given."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Render into the narrower width."""
        yield from console.render(self.renderable, options.update(width=max(options.max_width - ECHO_ROOM, 20)))


class _Bar(Progress):
    """A rich progress display that leaves ECHO_ROOM columns free at the right."""

    def get_renderables(self) -> Iterable[RenderableType]:
        """The tasks' table, ECHO_ROOM columns narrower than the terminal."""
        yield _Narrower(self.make_tasks_table(self.tasks))


class RunProgress:
    """A rich progress bar on a terminal; elsewhere (CI logs) at most one progress line every `heartbeat_s` and the
    final one (a short run prints one line), and a heartbeat line when nothing was printed for `heartbeat_s`."""

    def __init__(
        self,
        total: int,
        *,
        already_done: int = 0,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
        heartbeat_s: float = HEARTBEAT_S,
        activity: CallActivity | None = None,
        repeat: int = 1,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.total = total
        self.repeat = repeat
        """Each item runs `repeat` times: `total` counts item runs (items × repeat), and the lines say so."""
        self.unit = "item" if repeat == 1 else "item run"
        self.done = already_done
        self.failed = 0
        self._clock = clock
        self._started = clock()
        self._last_line = self._started
        self._new = 0
        self.heartbeat_s = heartbeat_s
        self.activity = activity
        self.listeners: list[Callable[[ItemResult], None]] = []
        """Called with every finished result (the live progress files)."""
        self._print_lock = threading.Lock()
        self._stop = threading.Event()
        self._beater: threading.Thread | None = None
        self._bar = _Bar(
            TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True)),
            BarColumn(bar_width=None),  # the bar takes what the words leave: they never wrap
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TextColumn("{task.fields[speed]}", table_column=Column(no_wrap=True)),
            _Clock(self, table_column=Column(no_wrap=True)),
            TextColumn("[red]{task.fields[failed]} failed", table_column=Column(no_wrap=True)),
            console=self.console,
            disable=not self.console.is_terminal,
            refresh_per_second=4,
            expand=True,
        )
        running = "running" if repeat == 1 else f"running {total // repeat} items × {repeat}"
        self._task = self._bar.add_task(
            running, total=total, completed=already_done, speed=speed_text(0.0, self.unit), failed=0
        )

    def __enter__(self) -> RunProgress:
        self._bar.start()
        if not self.console.is_terminal:
            self._beater = threading.Thread(target=self._beat, name="scoregate-heartbeat", daemon=True)
            self._beater.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._beater is not None:
            self._beater.join()
        self._bar.stop()

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.heartbeat_s / 2)):
            self.beat()

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
            f"  {self.count()} · {speed_text(self.rate, self.unit)} · {self.failed} failed"
            f" · elapsed {clock_text(self.elapsed)} · ETA {clock_text(self.eta)}"
        )

    def count(self) -> str:
        """`3/6 items`, or for a repeated run `12/24 item runs (6 items × 4)`."""
        if self.repeat == 1:
            return f"{self.done}/{self.total} items"
        return f"{self.done}/{self.total} item runs ({self.total // self.repeat} items × {self.repeat})"

    def heartbeat_line(self) -> str:
        """The line that says a waiting run is alive: items, calls finished, elapsed, the ETA once known, and the
        models its calls in flight wait on (each field kept whole when the line wraps)."""
        from scoregate.support.terminal_text import KEEP, keep

        calls, waiting = self.activity.snapshot() if self.activity is not None else (0, {})
        fields = [self.count(), f"{calls} call{'' if calls == 1 else 's'} done"]
        fields.append(f"elapsed {clock_text(self.elapsed)}")
        if (eta := self.eta) is not None and self._new:
            fields.append(f"ETA {clock_text(eta)}")
        if waiting:
            models = (f"{name} ({n} call{'' if n == 1 else 's'})" for name, n in waiting.items())
            fields.append("waiting on " + ", ".join(models))
        return "  " + f"{KEEP}· ".join(keep(field) for field in fields)

    def beat(self) -> None:
        """Without a terminal, print the heartbeat line when no line was printed for `heartbeat_s`."""
        if self.console.is_terminal or self._clock() - self._last_line < self.heartbeat_s:
            return
        self._print(self.heartbeat_line())

    def _print(self, line: str) -> None:
        from scoregate.support.terminal_text import print_wrapped

        with self._print_lock:
            print_wrapped(self.console, line.removeprefix("  "), first="  ", indent="    ")
            self._last_line = self._clock()

    def advance(self, failed: bool, result: ItemResult | None = None) -> None:
        """Count one finished item (and hand its result to the listeners)."""
        if result is not None:
            for listener in self.listeners:
                listener(result)
        self.done += 1
        self._new += 1
        self.failed += failed
        self._bar.update(self._task, completed=self.done, speed=speed_text(self.rate, self.unit), failed=self.failed)
        due = self.done >= self.total or self._clock() - self._last_line >= self.heartbeat_s
        if not self.console.is_terminal and due:
            self._print(self.line())
