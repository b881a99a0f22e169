"""An exclusive lock on one run directory, so two processes never run or resume the same run at once."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.support.processes import pid_alive

LOCK = ".lock"
RUN_HINT = "wait for it to finish (or stop it); two processes on one run would score items twice"
SYNC_HINT = "wait for the run to finish (or stop it), then sync it; a sync beside a running run could mirror it twice"


def _holder(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8").strip() or "0") or None
    except (OSError, ValueError):
        return None


def held_by(directory: Path) -> int | None:
    """Return the pid of the live process holding the run's lock, else None (never touches the lock itself).

    Where /proc/locks exists the OS lock itself is looked for (a reused pid is not mistaken for a holder).
    """
    path = directory / LOCK
    pid = _holder(path)
    if pid is None or not pid_alive(pid):
        return None
    try:
        inode = path.stat().st_ino
        table = Path("/proc/locks").read_text(encoding="utf-8")
    except OSError:
        return pid
    for line in table.splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
            return pid
    return None


class RunLock:
    """Holds `runs/<run_id>/.lock` (an OS lock plus the holder's pid) until released or the process dies.

    The OS drops the lock of a dead process by itself, so a lock left by a killed run (a stale pid in the
    file) is simply taken over.
    """

    def __init__(self, directory: Path, *, hint: str = RUN_HINT) -> None:
        self.path = directory / LOCK
        self.hint = hint
        self._handle: Any = None

    def acquire(self) -> None:
        """Take the lock or raise a ScoregateError naming the pid that holds it."""
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            pid = _holder(self.path)
            holder = f"process {pid}" if pid is not None and pid_alive(pid) else "another process"
            raise ScoregateError(
                f"run {self.path.parent.name} is in use by {holder}",
                where=str(self.path.parent),
                hint=self.hint,
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        """Give the lock back (the pid file stays; a later holder overwrites it)."""
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
