"""A run that waits says so: without a terminal, a line at least every `--heartbeat` seconds (default 30) while no
progress line was printed — calls done, elapsed, what it waits on — during the models' check and the items."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scoregate.calls.activity import CallActivity
from scoregate.engine.progress import RunProgress
from support.progress_clock import FakeClock, plain_console
from support.projects import CliResult
from support.scripted_openai import PREFLIGHT, ScriptedOpenAI


def test_a_heartbeat_line_comes_every_interval_while_nothing_else_is_printed() -> None:
    console, out = plain_console()
    clock, activity = FakeClock(), CallActivity()
    progress = RunProgress(9, console=console, clock=clock, heartbeat_s=30, activity=activity)
    for _ in range(3):
        activity.started("local")
        activity.finished("local")
    for _ in range(4):
        activity.started("local")

    clock.now += 29.9
    progress.beat()
    assert out.getvalue() == ""
    clock.now += 0.1
    progress.beat()
    assert out.getvalue().splitlines() == ["  0/9 items · 3 calls done · elapsed 30.0 s · waiting on local (4 calls)"]
    clock.now += 20
    progress.beat()
    assert len(out.getvalue().splitlines()) == 1  # the next one is due 30 s after the last line, not before
    clock.now += 10
    progress.beat()
    assert len(out.getvalue().splitlines()) == 2


def test_a_progress_line_restarts_the_heartbeat_and_the_eta_joins_it() -> None:
    console, out = plain_console()
    clock, activity = FakeClock(), CallActivity()
    progress = RunProgress(100, console=console, clock=clock, heartbeat_s=30, activity=activity)
    activity.started("judge")
    activity.finished("judge")
    activity.started("judge")
    clock.now += 25
    progress.advance(failed=False)  # 1/100: no tenth reached, no line; the heartbeat still counts from the start
    progress.beat()
    assert out.getvalue() == ""
    clock.now += 5
    progress.beat()
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    said = " ".join(line.strip() for line in lines)
    assert said == "1/100 items · 1 call done · elapsed 30.0 s · ETA 49m30s · waiting on judge (1 call)"


def test_on_a_terminal_the_bar_is_the_heartbeat() -> None:
    import io

    from rich.console import Console

    out = io.StringIO()
    clock = FakeClock()
    progress = RunProgress(9, console=Console(file=out, force_terminal=True), clock=clock, heartbeat_s=30)
    clock.now += 100
    progress.beat()
    assert out.getvalue() == ""


@pytest.fixture
def slow_replies(scripted_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> ScriptedOpenAI:
    monkeypatch.setenv("SCOREGATE_HEARTBEAT_S", "0.5")
    scripted_server.latency_s = 1.6
    return scripted_server


def test_a_run_without_a_terminal_says_it_is_alive_while_its_first_item_waits(
    scoregate: Callable[..., CliResult], slow_replies: ScriptedOpenAI
) -> None:
    result = scoregate("run", "counters", "--limit", "1", "--no-cache", "--no-mlflow")

    assert result.code == 0, result.output
    beats = [line for line in result.err.splitlines() if "calls done" in line]
    assert len(beats) >= 2, result.err
    assert beats[0].startswith("  0/1 items · 0 calls done · elapsed ")
    assert beats[0].endswith(" · waiting on scripted (1 call)")


def test_the_models_check_says_what_it_waits_on(
    scoregate: Callable[..., CliResult], slow_replies: ScriptedOpenAI, project_dir: Path
) -> None:
    slow_replies.latency_s = 0.0
    slow_replies.delay_next(1.6, path=PREFLIGHT)

    result = scoregate("run", "counters", "--limit", "1", "--no-cache", "--no-mlflow")

    assert result.code == 0, result.output
    assert f"model check: waiting on scripted at {slow_replies.url} for " in result.output
    assert "(a one-token reply; a busy server answers late)" in result.output


def test_a_wrapped_heartbeat_breaks_between_its_fields_never_inside_one() -> None:
    console, out = plain_console()
    clock, activity = FakeClock(), CallActivity()
    progress = RunProgress(9, console=console, clock=clock, heartbeat_s=30, activity=activity)
    for _ in range(7):
        activity.started("local")
    for _ in range(11):
        activity.started("a-judge-model-with-a-long-name")
    clock.now += 408
    progress.advance(failed=False)
    progress.advance(failed=False)
    clock.now += 30
    progress.beat()

    lines = out.getvalue().splitlines()[-2:]
    assert lines[0].startswith("  2/9 items") and lines[1].startswith("    ")
    assert all(len(line) <= 80 for line in lines), lines
    assert "waiting on local (7 calls), a-judge-model-with-a-long-name (11 calls)" in " ".join(
        line.strip() for line in lines
    )
    assert not lines[1].strip().startswith("·") and not lines[0].endswith("(7")
