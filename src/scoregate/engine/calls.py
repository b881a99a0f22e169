"""Every model call goes through here: connection limits, cache, retries and per-call telemetry."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpx2 as httpx

from scoregate.catalog.models import ModelSpec
from scoregate.engine.cache import ResponseCache, cache_key
from scoregate.engine.retry import Attempts, RetryPolicy, Sleep, with_retries
from scoregate.errors import ProviderUnavailable
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderError
from scoregate.providers.local_server import local_base_url
from scoregate.providers.openai_compat import tls_verify
from scoregate.providers.registry import build_provider
from scoregate.records import CallRecord
from scoregate.scoring.base import ModelCallFailed


class ModelCaller:
    """Routes calls to named models; records a CallRecord for every call, failed or not."""

    def __init__(
        self,
        models: dict[str, ModelSpec],
        *,
        default_judge: str,
        cache: ResponseCache | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._specs = models
        self._default_judge = default_judge
        self._cache = cache
        self._sleep = sleep
        self._providers: dict[str, Provider] = {}
        self._limits: dict[str, asyncio.Semaphore] = {}

    def provider(self, name: str) -> Provider:
        """Return (building once) the provider of model `name`."""
        if name not in self._providers:
            spec = self._specs[name]
            self._providers[name] = build_provider(spec)
            self._limits[name] = asyncio.Semaphore(connection_limit(spec))
        return self._providers[name]

    async def call(
        self, name: str | None, request: CompletionRequest, purpose: str, records: list[CallRecord]
    ) -> Completion:
        """Complete `request` on model `name` (None: the judge default); raise ModelCallFailed after retries."""
        name = name or self._default_judge
        provider = self.provider(name)
        key = cache_key(provider.model, provider.endpoint, request) if self._cache else ""
        if self._cache is not None and (hit := self._cache.get(key)) is not None:
            records.append(_record(purpose, provider, hit, 0))
            return hit
        attempts = Attempts()
        policy = RetryPolicy(max_retries=self._specs[name].max_retries)

        async def once() -> Completion:
            async with self._limits[name]:
                return await provider.complete(request)

        try:
            completion = await with_retries(once, policy, attempts, sleep=self._sleep)
        except ProviderError as exc:
            records.append(
                CallRecord(purpose, provider.model, provider.endpoint, retries=attempts.retries, error=str(exc))
            )
            raise ModelCallFailed(str(exc)) from exc
        if self._cache is not None:
            self._cache.put(key, provider.model, completion)
        records.append(_record(purpose, provider, completion, attempts.retries))
        return completion

    async def preflight(self, names: Iterable[str]) -> None:
        """Check every endpoint answers HTTP at all; raise ProviderUnavailable naming the URL and the fix."""
        names = list(dict.fromkeys(names))
        verify = any(tls_verify(self.provider(name).endpoint) for name in names)
        async with httpx.AsyncClient(timeout=5.0, verify=verify) as client:
            for name in names:
                provider = self.provider(name)
                try:
                    await client.get(provider.endpoint.rstrip("/") + "/models")
                except httpx.HTTPError as exc:
                    raise ProviderUnavailable(
                        f"model {name!r}: cannot reach {provider.endpoint} ({type(exc).__name__})",
                        hint=_unreachable_hint(self._specs[name], provider.endpoint),
                    ) from None

    async def aclose(self) -> None:
        """Close every provider's connections."""
        for provider in self._providers.values():
            await provider.aclose()


LOCAL_CONNECTIONS = 2
"""Calls in flight to the embedded llama.cpp server unless `max_connections` is set: it answers one at a time,
so more would only spend their `timeout_s` queueing there (an item's judges run side by side)."""


def connection_limit(spec: ModelSpec) -> int:
    """Return how many calls may be in flight to this model at once."""
    if spec.provider == "local" and "max_connections" not in spec.model_fields_set:
        return min(spec.max_connections, LOCAL_CONNECTIONS)
    return spec.max_connections


def _unreachable_hint(spec: ModelSpec, endpoint: str) -> str:
    if spec.provider == "local" or endpoint.startswith(local_base_url()):
        return "start the local model with `scoregate model serve` (or `make model-serve`)"
    return "check base_url in scoregate.yaml (or OPENAI_BASE_URL) and that the server is running"


def _record(purpose: str, provider: Provider, completion: Completion, retries: int) -> CallRecord:
    return CallRecord(
        purpose=purpose,
        model=provider.model,
        endpoint=provider.endpoint,
        latency_ms=completion.latency_ms,
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
        cost_usd=0.0 if completion.cached else completion.cost_usd,
        retries=retries,
        cached=completion.cached,
    )
