"""Follow a run from another process: read its progress.json until the run ends or its process dies."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.engine.live import ACTIVE_RUN, PROGRESS
from scoregate.engine.progress import speed_text
from scoregate.errors import ScoregateError
from scoregate.store.lock import held_by
from scoregate.store.run_lookup import stored_run_directory
from scoregate.store.run_store import run_directory
from scoregate.support.figures import clock_text
from scoregate.support.processes import pid_alive

STALE_AFTER_S = 15.0
"""A progress file not rewritten for this long belongs to a process that is gone (it beats twice a second)."""


@dataclass(frozen=True)
class WatchState:
    """One look at a run: its latest snapshot and whether (and how) it ended."""

    snapshot: dict[str, Any]
    ended: str | None = None
    """None while running; `finished`, `interrupted`, `failed` or `died`."""
    detail: str = ""


def run_to_watch(runs_dir: Path, run_id: str | None) -> str:
    """Return the run to watch: `run_id`, or the one `runs/active-run.json` points to."""
    if run_id is not None:
        return stored_run_directory(runs_dir, run_id).name
    pointer = _read(runs_dir / ACTIVE_RUN)
    if pointer is None or not isinstance(pointer.get("run_id"), str):
        state = "is damaged (no run id in it)" if (runs_dir / ACTIVE_RUN).exists() else "does not exist"
        raise ScoregateError(
            f"no run to watch: {runs_dir / ACTIVE_RUN} {state}",
            hint="start one with `scoregate run EXPERIMENT` (in another terminal), or name a RUN",
        )
    return run_directory(runs_dir, pointer["run_id"]).name


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):  # gone, a folder, unreadable
        return None
    except json.JSONDecodeError:  # written by a tool other than ours; atomic writes never leave half a file
        return None
    return data if isinstance(data, dict) else None


def look(runs_dir: Path, run_id: str, *, stale_after_s: float = STALE_AFTER_S) -> WatchState:
    """Return the run's state now: its snapshot, and whether it ended or its process died.

    A run whose lock a live process holds is running, whatever its last progress file says: a resume writes
    none until its model check has passed.
    """
    state = _look(runs_dir, run_id, stale_after_s=stale_after_s)
    if state.ended in (None, "finished"):
        return state
    holder = held_by(runs_dir / run_id)
    if holder is None:
        return state
    snap = {**state.snapshot, "status": "running"}
    return WatchState(snap, detail=f"process {holder} holds the run (a resume starting)")


def _recorded_status(path: Path) -> str:
    """The status the run's manifest records; `unknown` when it cannot be read (a watcher never fails on it)."""
    from pydantic import ValidationError

    from scoregate.store.record import Manifest  # pydantic: loaded only when a run has no progress file

    try:
        status = Manifest.model_validate(_read(path) or {}).status
    except ValidationError:
        return "unknown"
    return "unknown" if status is None else status


def _look(runs_dir: Path, run_id: str, *, stale_after_s: float) -> WatchState:
    snap = _read(runs_dir / run_id / PROGRESS)
    if snap is None:
        status = _recorded_status(runs_dir / run_id / "manifest.json")
        if status == "running":
            return WatchState({"run_id": run_id, "status": status, "done": 0, "total": None})
        return WatchState({"run_id": run_id, "status": status}, ended=status, detail="it has no live progress file")
    if snap.get("status") != "running":
        return WatchState(snap, ended=str(snap.get("status")))
    pid = snap.get("pid")
    if snap.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid):
        return WatchState(snap, ended="died", detail=f"its process (pid {pid}) is gone")
    age = time.time() - float(snap.get("updated_unix") or 0)
    if age > stale_after_s:
        return WatchState(snap, ended="died", detail=f"its progress file has not changed for {age:.0f}s")
    return WatchState(snap)


def follow(
    runs_dir: Path,
    run_id: str,
    *,
    interval_s: float = 0.5,
    stale_after_s: float = STALE_AFTER_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[WatchState]:
    """Yield the run's state every `interval_s` until it ends (the last state yielded has `ended` set)."""
    while True:
        state = look(runs_dir, run_id, stale_after_s=stale_after_s)
        yield state
        if state.ended is not None:
            return
        sleep(interval_s)


def progress_line(snap: dict[str, Any]) -> str:
    """One line (under 80 columns) for a snapshot: done/total, failures, rate, ETA, tokens, cost."""
    total = snap.get("total")
    parts = [f"{snap.get('done', 0)}/{total if total is not None else '?'} items"]
    parts.append(f"{snap.get('failed', 0)} failed")
    if snap.get("items_per_s") is not None:
        parts.append(speed_text(float(snap["items_per_s"])))
    eta = snap.get("eta_s")
    if eta is not None:
        parts.append(f"ETA {clock_text(float(eta))}")
    tokens = (snap.get("tokens") or {}).get("total")
    if tokens:
        parts.append(f"{tokens:,} tok")
    if snap.get("cost_usd"):
        parts.append(f"${snap['cost_usd']:.4f}")
    return "  ".join(parts)


def ending_line(state: WatchState) -> str:
    """What to tell the user when the run ended, and what to do next."""
    snap = state.snapshot
    run_id = snap.get("run_id", "?")
    done = f"{snap.get('done', '?')}/{snap.get('total', '?')} items, {snap.get('failed', 0)} failed"
    if state.ended == "finished":
        return f"run {run_id} finished: {done}"
    if state.ended == "died":
        return f"run {run_id} stopped: {state.detail} ({done}); resume with `scoregate run --resume {run_id}`"
    if state.ended in ("interrupted", "failed"):
        return f"run {run_id} {state.ended} ({done}); resume with `scoregate run --resume {run_id}`"
    extra = f": {state.detail}" if state.detail else ""
    return f"run {run_id} is {state.ended}{extra}"
