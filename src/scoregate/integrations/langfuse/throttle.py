"""A token-bucket throttle that keeps scoregate's Langfuse requests under the server's rate limit."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from scoregate.errors import ScoregateError

RPM_ENV = "SCOREGATE_LANGFUSE_RPM"
DEFAULT_RPM = 90.0
"""Langfuse Cloud's free tier allows ~100 dataset requests a minute; stay a little under it."""
DEFAULT_BURST = 10


class Throttle:
    """At most `per_minute` requests a minute on average, with bursts of up to `burst` back to back.

    Time is injected (`clock`, `sleep`) so that tests never really wait. `per_minute <= 0` means no limit.
    """

    def __init__(
        self,
        per_minute: float = DEFAULT_RPM,
        *,
        burst: int = DEFAULT_BURST,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.per_minute = per_minute
        self.capacity = float(max(1, min(burst, int(per_minute)))) if per_minute > 0 else 0.0
        self._rate = per_minute / 60.0
        self._clock = clock
        self._sleep = sleep
        self._tokens = self.capacity
        self._stamp = clock()
        self.waited_s = 0.0
        """Total seconds spent waiting for a token."""

    @property
    def limited(self) -> bool:
        """False when the throttle lets every request through at once."""
        return self.per_minute > 0

    def acquire(self) -> float:
        """Take one token, sleeping until one is free; return the seconds slept."""
        if not self.limited:
            return 0.0
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        wait = (1.0 - self._tokens) / self._rate
        self._sleep(wait)
        self._stamp = self._clock()
        self._tokens = 0.0
        self.waited_s += wait
        return wait


def rpm_from_env() -> float:
    """Return the requests-per-minute budget from SCOREGATE_LANGFUSE_RPM (default 90; 0 = no limit)."""
    raw = os.environ.get(RPM_ENV, "").strip()
    if not raw:
        return DEFAULT_RPM
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0 or value != value:
        raise ScoregateError(
            f"{RPM_ENV}={raw!r} is not a number of requests per minute",
            hint=f"set {RPM_ENV} to e.g. 90 (Langfuse Cloud free tier), 900 (Pro), or 0 for no limit",
        )
    return value
