"""One retry loop for every model call: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from scoregate.providers.base import ProviderError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between tries of a retryable failure."""

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0
    jitter: float = 0.25

    def delay(self, attempt: int, error: ProviderError, rand: Callable[[], float] = random.random) -> float:
        """Return the wait before retry number `attempt` (1-based)."""
        if error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after_s)
        backoff = min(self.base_delay_s * 2 ** (attempt - 1), self.max_delay_s)
        return backoff * (1 + self.jitter * (2 * rand() - 1))


@dataclass(slots=True)
class Attempts:
    """How many retries a call needed (filled in even when it finally fails)."""

    retries: int = 0


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    attempts: Attempts,
    *,
    sleep: Sleep = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """Run `call`, retrying retryable ProviderErrors; raise the last error when tries run out."""
    while True:
        try:
            return await call()
        except ProviderError as error:
            if not error.retryable or attempts.retries >= policy.max_retries:
                raise
            attempts.retries += 1
            await sleep(policy.delay(attempts.retries, error, rand))
