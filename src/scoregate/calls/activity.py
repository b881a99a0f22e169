"""What a caller's model calls are doing now: how many finished, how many are in flight per model (what a run
waits on, for its heartbeat line)."""

from __future__ import annotations

import threading
from collections import Counter


class CallActivity:
    """Counts calls as they start and finish; read from another thread (the heartbeat), so it holds a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = 0
        self._in_flight: Counter[str] = Counter()

    def started(self, model: str) -> None:
        """A call to `model` (its name in scoregate.yaml) was sent."""
        with self._lock:
            self._in_flight[model] += 1

    def finished(self, model: str) -> None:
        """A call to `model` ended, answered or failed."""
        with self._lock:
            self._in_flight[model] -= 1
            if self._in_flight[model] <= 0:
                del self._in_flight[model]
            self._done += 1

    def snapshot(self) -> tuple[int, dict[str, int]]:
        """(calls finished, model name → calls in flight), in the order the models were first called."""
        with self._lock:
            return self._done, dict(self._in_flight)
