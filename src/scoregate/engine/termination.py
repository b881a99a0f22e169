"""SIGTERM (CI cancellation, `timeout`, container stop) handled like Ctrl-C while a run's items execute.

While the items' event loop runs, the signal does not raise inside whatever code runs at that moment (a
worker coroutine, an HTTP client, a store write): it cancels the run's main task, as asyncio does for Ctrl-C,
so every worker is cancelled at an `await`, gathered and retrieved, and the progress files close as
interrupted. Outside the loop (or at a second signal) it raises `Terminated` at once.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: handled like Ctrl-C, with exit code 143."""


class _Termination:
    """The run's main task while its loop runs, and whether SIGTERM asked it to stop."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.active = False
        self.requested = False

    def handler(self, signum: int, frame: object) -> None:
        if self.requested or not self.active:  # outside the loop, or asked twice: stop at once
            raise Terminated()
        self.requested = True
        task, loop = self.task, self.loop
        if task is not None and loop is not None and not task.done() and not loop.is_closed():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake the loop if it waits in select()


_current: _Termination | None = None


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While running items, turn SIGTERM (CI cancel, `timeout`, container stop) into an interruption."""
    global _current
    state = _Termination()
    try:
        previous = signal.signal(signal.SIGTERM, state.handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    _current = state
    try:
        yield
    finally:
        _current = None
        signal.signal(signal.SIGTERM, previous)


def run_terminable(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`; under `sigterm_as_interrupt`, SIGTERM cancels `main` and `Terminated` is raised after.

    The cancellation reaches every task `main` awaits at its next `await`, so none dies unretrieved.
    """
    state = _current
    if state is None:
        return asyncio.run(main)

    async def guarded() -> T:
        state.loop, state.task = asyncio.get_running_loop(), asyncio.current_task()
        if state.requested:  # the signal came while the loop was starting
            main.close()
            raise asyncio.CancelledError()
        try:
            return await main
        finally:
            state.task = None

    state.active = True
    try:
        result = asyncio.run(guarded())
    except asyncio.CancelledError:
        if state.requested:
            raise Terminated() from None
        raise
    finally:
        state.active, state.loop = False, None
    if state.requested:  # it came after the last item: the run still stops, as it was asked to
        raise Terminated()
    return result
