"""Every model call goes through here: connection limits, cache, retries and per-call telemetry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime

from scoregate.calls.activity import CallActivity
from scoregate.calls.breaker import STOP_STATUSES, CircuitBreaker
from scoregate.calls.cache import ResponseCache, cache_key
from scoregate.calls.errors import ModelCallFailed
from scoregate.calls.retry import Attempts, RetryPolicy, Sleep, with_retries
from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderContext, ProviderError
from scoregate.providers.registry import build_provider
from scoregate.store.records import CallRecord
from scoregate.support.redaction import redact
from scoregate.support.storable import replace_surrogates, surrogate_note


class ModelCaller:
    """Routes calls to named models; records a CallRecord for every call, failed or not."""

    def __init__(
        self,
        models: dict[str, ModelSpec],
        *,
        default_judge: str,
        cache: ResponseCache | None = None,
        sleep: Sleep = asyncio.sleep,
        breaker: CircuitBreaker | None = None,
        context: ProviderContext | None = None,
    ) -> None:
        self._specs = models
        self._default_judge = default_judge
        self._context = context
        self._cache = cache
        self._sleep = sleep
        self._providers: dict[str, Provider] = {}
        self._limits: dict[str, asyncio.Semaphore] = {}
        self.breaker = breaker or CircuitBreaker()
        self.activity = CallActivity()
        """Calls finished and in flight, for the run's heartbeat line."""

    def provider(self, name: str) -> Provider:
        """Return (building once) the provider of model `name`."""
        if name not in self._providers:
            provider = build_provider(name, self._specs[name], self._context)
            self._providers[name] = provider
            self._limits[name] = asyncio.Semaphore(provider.max_connections())
        return self._providers[name]

    async def call(
        self, name: str | None, request: CompletionRequest, purpose: str, records: list[CallRecord]
    ) -> Completion:
        """Complete `request` on model `name` (None: the judge default); raise ModelCallFailed after retries."""
        name = name or self._default_judge
        provider = self.provider(name)
        started = time.monotonic()
        context = replace(
            _call_context(name, self._specs[name], request),
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )

        def finish(record: CallRecord) -> CallRecord:
            record.model_name, record.provider, record.started_at = name, context.provider, context.started_at
            record.structured, record.schema_name = context.structured, context.schema_name
            record.duration_ms = round((time.monotonic() - started) * 1000, 3)
            record.ended_at = _now()
            return record

        key = cache_key(provider.model, provider.endpoint, request) if self._cache else ""
        if self._cache is not None and (hit := self._cache.get(key)) is not None:
            hit.text = redact(hit.text)  # an entry cached before replies were redacted
            records.append(finish(_record(purpose, provider, hit, 0)))
            self.activity.started(name)
            self.activity.finished(name)
            return _storable_reply(hit, records[-1])
        attempts = Attempts()
        policy = RetryPolicy(max_retries=self._specs[name].max_retries)

        async def once() -> Completion:
            async with self._limits[name]:
                return await provider.complete(request)

        self.activity.started(name)
        try:
            completion = await with_retries(once, policy, attempts, sleep=self._sleep)
        except ProviderError as exc:
            self.breaker.record_failure(exc)
            error = redact(str(exc))
            records.append(
                finish(CallRecord(purpose, provider.model, provider.endpoint, retries=attempts.retries, error=error))
            )
            raise ModelCallFailed(error) from exc
        finally:
            self.activity.finished(name)
        self.breaker.record_success()
        completion.text = redact(completion.text)  # an endpoint may echo the key in a reply too
        if self._cache is not None:
            self._cache.put(key, provider.model, completion)
        records.append(finish(_record(purpose, provider, completion, attempts.retries)))
        return _storable_reply(completion, records[-1])

    def uncached(self) -> ModelCaller:
        """Return a caller sharing these providers and connection limits that never reads or writes the cache."""
        twin = ModelCaller(
            self._specs,
            default_judge=self._default_judge,
            cache=None,
            sleep=self._sleep,
            breaker=self.breaker,
            context=self._context,
        )
        twin._providers, twin._limits, twin.activity = self._providers, self._limits, self.activity
        return twin

    async def preflight(self, names: Iterable[str], *, records: list[CallRecord] | None = None) -> None:
        """Send one tiny real request per model before a run exists; raise ProviderUnavailable naming the fix.

        An unset key variable, an endpoint that cannot be reached (or is busy), and a 401/403/404 answer
        (wrong key, no access, wrong `base_url` path or model name) stop the run here, with the server's words
        and the provider's hint. Each request sent is appended to `records` (purpose `model_check`), for the
        run's per-call telemetry.
        """
        try:
            for name in dict.fromkeys(names):
                await self._preflight_one(name, records if records is not None else [])
        finally:  # the check runs in its own event loop: connections made here must not outlive it
            await self.aclose()
            self._providers.clear()
            self._limits.clear()

    async def _preflight_one(self, name: str, records: list[CallRecord]) -> None:
        provider = self.provider(name)
        if (missing := provider.missing_key(name)) is not None:
            raise missing
        started = time.monotonic()
        record = replace(
            _call_context(name, self._specs[name], PREFLIGHT_REQUEST),
            purpose=MODEL_CHECK,
            endpoint=provider.endpoint,
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
        records.append(record)
        try:
            completion = await provider.complete(PREFLIGHT_REQUEST)
        except ProviderError as exc:
            record.error = str(exc)
            record.duration_ms, record.ended_at = round((time.monotonic() - started) * 1000, 3), _now()
            if exc.unreachable:
                raise provider.unreachable(name) from None
            if exc.status is None and exc.retryable and "timed out" in str(exc):
                raise provider.busy(name) from None
            if exc.status in STOP_STATUSES:
                raise provider.refused(name, exc) from None
            # 429 and 5xx: the run retries them with backoff
            return
        record.duration_ms, record.ended_at = round((time.monotonic() - started) * 1000, 3), _now()
        record.latency_ms, record.tokens_in, record.tokens_out = (
            completion.latency_ms,
            completion.tokens_in,
            completion.tokens_out,
        )
        record.cost_usd = completion.cost_usd

    async def aclose(self) -> None:
        """Close every provider's connections."""
        for provider in self._providers.values():
            await provider.aclose()


MODEL_CHECK = "model_check"
"""The purpose (and telemetry stage) of the one-token request a run sends per model before it starts."""
PREFLIGHT_TEXT = "scoregate preflight: reply with OK"
PREFLIGHT_REQUEST = CompletionRequest(messages=({"role": "user", "content": PREFLIGHT_TEXT},), max_tokens=1)


def _storable_reply(completion: Completion, record: CallRecord) -> Completion:
    """The reply with any lone UTF-16 surrogate as U+FFFD (it is not Unicode: no request, file or page could hold
    it); the call's record notes how many were replaced."""
    text, found = replace_surrogates(completion.text)
    if not found:
        return completion
    record.note = surrogate_note(found) + " in the reply"
    return replace(completion, text=text)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _call_context(name: str, spec: ModelSpec, request: CompletionRequest) -> CallRecord:
    """The telemetry fields known before the call: which model, provider, and whether the reply is structured."""
    structured = request.json_schema is not None
    return CallRecord(
        purpose="",
        model=spec.model,
        endpoint="",
        model_name=name,
        provider=spec.provider,
        structured=structured,
        schema_name=request.schema_name if structured else None,
    )


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
