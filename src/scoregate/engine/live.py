"""Live progress files: `runs/<id>/progress.json` and `runs/active-run.json`, rewritten atomically twice a second.

A second terminal (`scoregate runs watch`) or a page polls them: done, failed, total, items/s, ETA, running
cost and tokens, per stage. The heartbeat keeps `updated_at` moving while no item finishes, so a reader can
tell a slow run from a dead one.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore, StoreWriteError
from scoregate.store.vocabulary import stage_of

PROGRESS = "progress.json"
ACTIVE_RUN = "active-run.json"
INTERVAL_S = 0.5


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write `data` to `path` through a temporary file and a rename, so a reader never sees half a file."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a full disk must not leave half a temporary file behind
        raise


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Stage:
    __slots__ = ("calls", "cost_usd", "failed", "latency_ms", "timed", "tokens_total")

    def __init__(self) -> None:
        self.calls = self.failed = self.tokens_total = self.timed = 0
        self.cost_usd = self.latency_ms = 0.0


class LiveProgress:
    """Counts finished items (a RunProgress listener) and writes the live files from a heartbeat thread."""

    def __init__(
        self,
        store: RunStore,
        runs_dir: Path,
        *,
        experiment: str,
        total: int,
        already_done: int = 0,
        final_stage: str | None = None,
        interval_s: float = INTERVAL_S,
    ) -> None:
        self.store = store
        self.runs_dir = runs_dir
        self.experiment = experiment
        self.total = total
        self.done = already_done
        self.failed = 0
        self.final_stage = final_stage
        self.interval_s = interval_s
        self.status = "running"
        self._new = 0
        self._started = time.monotonic()
        self._started_at = _now()
        self._tokens = {"prompt": 0, "completion": 0, "total": 0}
        self._cost = 0.0
        self._calls = 0
        self._stages: dict[str, _Stage] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="scoregate-live-progress", daemon=True)

    def observe(self, result: ItemResult) -> None:
        """Count one finished item: its failure, calls, tokens and cost, per stage."""
        with self._lock:
            self.done += 1
            self._new += 1
            self.failed += result.error is not None
            for call in result.calls:
                stage = self._stages.setdefault(stage_of(call.purpose, self.final_stage), _Stage())
                stage.calls += 1
                stage.failed += call.error is not None
                self._calls += 1
                tokens = (call.tokens_in or 0) + (call.tokens_out or 0)
                self._tokens["prompt"] += call.tokens_in or 0
                self._tokens["completion"] += call.tokens_out or 0
                self._tokens["total"] += tokens
                stage.tokens_total += tokens
                if call.cost_usd is not None:
                    self._cost += call.cost_usd
                    stage.cost_usd += call.cost_usd
                if call.latency_ms is not None and not call.cached:
                    stage.latency_ms += call.latency_ms
                    stage.timed += 1

    def snapshot(self) -> dict[str, Any]:
        """Return the current state as written to progress.json."""
        with self._lock:
            elapsed = time.monotonic() - self._started
            rate = self._new / elapsed if elapsed > 0 else 0.0
            left = max(self.total - self.done, 0)
            return {
                "run_id": self.store.run_id,
                "experiment": self.experiment,
                "status": self.status,
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started_at": self._started_at,
                "updated_at": _now(),
                "updated_unix": time.time(),
                "elapsed_s": round(elapsed, 3),
                "total": self.total,
                "done": self.done,
                "failed": self.failed,
                "items_per_s": round(rate, 4),
                "eta_s": round(left / rate, 1) if rate > 0 else None,
                "calls": self._calls,
                "tokens": dict(self._tokens),
                "cost_usd": round(self._cost, 8),
                "stages": {
                    name: {
                        "calls": s.calls,
                        "failed": s.failed,
                        "tokens_total": s.tokens_total,
                        "cost_usd": round(s.cost_usd, 8),
                        "latency_ms_mean": round(s.latency_ms / s.timed, 3) if s.timed else None,
                    }
                    for name, s in self._stages.items()
                },
            }

    def write(self) -> None:
        """Rewrite progress.json and the active-run pointer with the current snapshot."""
        snap = self.snapshot()
        write_json_atomic(self.store.directory / PROGRESS, snap)
        write_json_atomic(self.runs_dir / ACTIVE_RUN, {**snap, "progress": f"{self.store.run_id}/{PROGRESS}"})

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            with contextlib.suppress(OSError):  # a full disk must not kill the run; the next beat tries again
                self.write()

    def __enter__(self) -> LiveProgress:
        self.write()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        if exc_type is None:
            self.status = "finished"
        elif issubclass(exc_type, KeyboardInterrupt | SystemExit) or exc_type.__name__ == "CancelledError":
            self.status = "interrupted"
        else:
            self.status = "failed"
        try:
            self.write()
        except OSError as error:
            if exc_type is None:  # the run's items are stored; say which file could not be written
                path = Path(error.filename or self.store.directory / PROGRESS)
                raise StoreWriteError(path, error, self.store.run_id) from None
            # else the error that ended the run (often the same full disk) is the one to report
