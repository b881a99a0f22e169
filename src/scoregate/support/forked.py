"""Work done in a forked child process while the caller goes on: on a machine with a second core, a run's telemetry
is written beside its summary and report instead of after them."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable


class Forked:
    """The child doing the work (or none, when the work was done in the caller); `wait()` says how it ended."""

    def __init__(self, pid: int | None) -> None:
        self._pid = pid

    def wait(self) -> bool:
        """Wait for the child; True when it did the work (or the caller did), False when it failed: redo it then,
        in the caller, to get its error."""
        if self._pid is None:
            return True
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        return os.waitstatus_to_exitcode(status) == 0


def call_forked(work: Callable[[], object]) -> Forked:
    """Run `work` in a forked child (Linux, no other thread alive: a fork copies only the calling thread, and a lock
    another thread held would stay held in the child); elsewhere run it now, its exception raised here."""
    if sys.platform != "linux" or threading.active_count() > 1:
        work()
        return Forked(None)
    pid = os.fork()
    if pid == 0:  # the child: do the work and leave at once (no exit handlers, no flush of the caller's buffers)
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    return Forked(pid)
