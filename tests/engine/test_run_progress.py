"""The run's own progress: plain lines with elapsed and ETA in CI logs, a bar with both on a terminal."""

from __future__ import annotations

import io
import re

from rich.cells import cell_len
from rich.console import Console

from scoregate.engine.progress import RunProgress
from support.progress_clock import FakeClock, plain_console


def test_plain_lines_say_elapsed_and_eta_and_fit_80_columns() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(6, console=console, clock=clock, heartbeat_s=1.0)
    for n in range(6):
        clock.now += 0.5
        progress.advance(failed=n == 4)

    lines = out.getvalue().splitlines()
    assert lines[0] == "  2/6 items · 2.0 items/s · 0 failed · elapsed 1.0 s · ETA 2.0 s"
    assert lines[1] == "  4/6 items · 2.0 items/s · 0 failed · elapsed 2.0 s · ETA 1.0 s"
    assert lines[-1] == "  6/6 items · 2.0 items/s · 1 failed · elapsed 3.0 s · ETA 0.0 s"
    assert len(lines) == 3  # one a second (the interval), the last one when the run is done
    assert "e+0" not in out.getvalue()


def test_a_run_of_a_tenth_of_a_second_prints_only_its_final_line() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(10, console=console, clock=clock)
    for _ in range(10):
        clock.now += 0.01
        progress.advance(failed=False)

    assert out.getvalue().splitlines() == ["  10/10 items · 100.0 items/s · 0 failed · elapsed 0.1 s · ETA 0.0 s"]


def test_a_long_slow_run_reads_in_minutes_and_hours_within_80_columns() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(10000, console=console, clock=clock, heartbeat_s=4499)
    for _ in range(1000):
        clock.now += 4.5
        progress.advance(failed=True)

    (line,) = out.getvalue().splitlines()
    assert line == "  1000/10000 items · 4.5 s/item · 1000 failed · elapsed 1h15m · ETA 11h15m"  # not 0.22 items/s
    assert cell_len(line) <= 80


def test_eta_is_unknown_until_an_item_of_this_session_finished() -> None:
    console, _ = plain_console()
    clock = FakeClock()
    progress = RunProgress(10, already_done=4, console=console, clock=clock)
    clock.now += 2
    assert progress.line().endswith("· elapsed 2.0 s · ETA —")


def test_a_resumed_run_prints_a_line_per_interval_not_one_per_item() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(100, already_done=55, console=console, clock=clock, heartbeat_s=10)
    for _ in range(45):
        clock.now += 1
        progress.advance(failed=False)

    dones = [int(re.match(r"\s+(\d+)/", line).group(1)) for line in out.getvalue().splitlines()]  # type: ignore[union-attr]
    assert dones == [65, 75, 85, 95, 100]  # every 10 s, and the last one


def test_the_terminal_bar_shows_elapsed_and_the_eta_as_the_log_line_does() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    clock = FakeClock()
    progress = RunProgress(6, console=console, clock=clock)
    clock.now += 271
    progress.advance(failed=False)

    console.print(progress._bar.get_renderable())
    text = out.getvalue()
    assert re.search(r"1/6 .*s/item elapsed 4m31s · ETA 22m35s 0 failed", text), text  # not 0:04:31, not -:--:--
    assert "elapsed 4m31s · ETA 22m35s" in progress.line()


def test_the_terminal_bar_leaves_room_for_the_ctrl_c_echo() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    progress = RunProgress(6, console=console)
    progress.advance(failed=False)

    console.print(progress._bar.get_renderable())
    (line,) = out.getvalue().splitlines()
    assert cell_len(line) <= 78  # `^C` fits after it: no wrap, no second bar left behind


def test_a_run_slower_than_an_item_a_second_reads_in_seconds_per_item() -> None:
    console, out = plain_console()
    clock = FakeClock()
    progress = RunProgress(10, console=console, clock=clock)
    assert " · — s/item · " in progress.line()  # nothing finished yet: not `0.00 items/s`
    clock.now += 125
    progress.advance(failed=False)

    assert out.getvalue().splitlines() == ["  1/10 items · 2m05s/item · 0 failed · elapsed 2m05s · ETA 18m45s"]
