"""SIGTERM (CI cancellation, `timeout`, container stop) handled like Ctrl-C while a run's items execute."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: handled like Ctrl-C, with exit code 143."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While running items, turn SIGTERM (CI cancel, `timeout`, container stop) into an interruption."""

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
