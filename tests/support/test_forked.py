"""`call_forked`: work done in a forked child while the caller goes on (a run's telemetry beside its summary)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import os, sys, threading, time
from pathlib import Path
from scoregate.support.forked import call_forked
out = Path(sys.argv[1])
if sys.argv[2] == "thread":
    threading.Thread(target=time.sleep, args=(2,), daemon=True).start()

def write():
    if sys.argv[2] == "fail":
        raise OSError("disk full")
    out.write_text(str(os.getpid()))

child = call_forked(write)
print(os.getpid(), child.wait())
"""


def _probe(tmp_path: Path, mode: str) -> tuple[str, str, str]:
    out = tmp_path / "pid.txt"
    done = subprocess.run([sys.executable, "-c", PROBE, str(out), mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pid, ok = done.stdout.split()
    return pid, ok, out.read_text() if out.is_file() else ""


def test_the_work_runs_in_a_child_process_and_its_success_comes_back(tmp_path: Path) -> None:
    pid, ok, written_by = _probe(tmp_path, "plain")

    assert ok == "True" and written_by and written_by != pid


def test_a_failure_in_the_child_comes_back_as_false_so_the_caller_can_redo_it(tmp_path: Path) -> None:
    _pid, ok, written_by = _probe(tmp_path, "fail")

    assert ok == "False" and written_by == ""


def test_with_another_thread_alive_the_work_runs_in_the_caller_at_once(tmp_path: Path) -> None:
    """A fork copies only the calling thread: a lock another thread holds would stay held in the child forever."""
    pid, ok, written_by = _probe(tmp_path, "thread")

    assert ok == "True" and written_by == pid
