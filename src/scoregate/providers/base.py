"""The one async model interface every provider implements, and its request/response types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """What to ask a model: messages, sampling parameters and an optional JSON schema for the reply."""

    messages: tuple[dict[str, str], ...]
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    json_schema: dict[str, Any] | None = None
    schema_name: str = "output"
    schema_strict: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Completion:
    """A model's reply with usage, latency and cost (None where unknown)."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    finish_reason: str | None = None
    cached: bool = False


class ProviderError(Exception):
    """A failed model call; `retryable` and `retry_after` tell the retry loop what to do."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.unreachable = unreachable


class Provider(Protocol):
    """An async model endpoint."""

    @property
    def model(self) -> str:
        """The model name sent to the endpoint."""
        ...

    @property
    def endpoint(self) -> str:
        """Where requests go (a URL, or the provider's name); never holds a key."""
        ...

    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one request; raise ProviderError on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
