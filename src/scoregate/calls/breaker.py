"""A circuit breaker: stop a run early when its endpoint is down for good or refuses every call."""

from __future__ import annotations

from dataclasses import dataclass

from scoregate.providers.base import ProviderError

STOP_STATUSES = (401, 403, 404)


class CircuitOpen(Exception):
    """Raised by the runner when the breaker tripped; `reason` names the last failure."""

    def __init__(self, reason: str, count: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.count = count


@dataclass
class CircuitBreaker:
    """Counts consecutive calls that failed for a reason more calls cannot fix.

    Such a failure is a connection that cannot be made (after every retry) or a 401/403/404 answer;
    any successful call resets the count. `threshold` 0 disables the breaker.
    """

    threshold: int = 5
    consecutive: int = 0
    last_error: str | None = None

    def record_success(self) -> None:
        """A call succeeded: the endpoint is up."""
        self.consecutive = 0

    def record_failure(self, error: ProviderError) -> None:
        """A call failed after its retries; count it when it says the endpoint is down or refusing."""
        if error.unreachable or error.status in STOP_STATUSES:
            self.consecutive += 1
            self.last_error = str(error)
        else:
            self.consecutive = 0

    @property
    def tripped(self) -> bool:
        """True once `threshold` such failures came in a row."""
        return self.threshold > 0 and self.consecutive >= self.threshold

    def check(self) -> None:
        """Raise CircuitOpen when tripped."""
        if self.tripped:
            raise CircuitOpen(self.last_error or "the endpoint failed", self.consecutive)
