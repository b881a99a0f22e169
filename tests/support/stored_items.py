"""Wait until a running `scoregate run` has stored a number of items (for kills and resumes mid-run); list them."""

from __future__ import annotations

import subprocess
import time

from support.projects import Runs

STARTUP_LIMIT_S = 60.0


def wait_for_stored_items(
    process: subprocess.Popen[str], runs: Runs, at_least: int, *, besides: tuple[str, ...] = ()
) -> str:
    """Wait until the running process has stored `at_least` items; return its run id (not one of `besides`)."""
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for run_id in (i for i in runs.ids() if i not in besides):
            path = runs.root / run_id / "results.jsonl"
            if path.is_file() and path.read_bytes().count(b"\n") >= at_least:
                return run_id
        time.sleep(0.05)
    raise AssertionError(f"no {at_least} items stored within {STARTUP_LIMIT_S:.0f}s")


def stored_keys(runs: Runs, run_id: str) -> list[tuple[str, int]]:
    """The (item id, repeat) of each stored result of the run, in store order."""
    return [(r["item_id"], r.get("repeat", 1)) for r in runs.results(run_id)]
