"""Anthropic Messages API through `anthropic.AsyncAnthropic`; JSON output through a forced tool call.

Requests carry no sampling parameters: `temperature` and `top_p` of a model, prompt or judge are not sent to
Anthropic models (API version 2026-10-21 refuses them), so those models sample at their own default.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import anthropic

from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import Completion, CompletionRequest, ProviderError
from scoregate.providers.openai_compat import retry_after_seconds, short_error
from scoregate.providers.pricing import call_cost, price_per_mtok

DEFAULT_MAX_TOKENS = 1024


def classify(exc: Exception, endpoint: str) -> ProviderError:
    """Map an anthropic SDK exception to a ProviderError that says whether to retry."""
    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderError(f"timed out calling {endpoint}", retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderError(f"cannot connect to {endpoint}", retryable=True, unreachable=True)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        return ProviderError(
            f"HTTP {status} from {endpoint}: {short_error(exc.message)}",
            retryable=status in (408, 409, 429, 529) or status >= 500,
            status=status,
            retry_after=retry_after_seconds(exc.response.headers),
        )
    return ProviderError(f"{type(exc).__name__}: {exc}", retryable=False)


class AnthropicProvider:
    """Claude models; a JSON schema becomes a single forced tool whose input is the answer."""

    def __init__(self, spec: ModelSpec) -> None:
        self._spec = spec
        self._endpoint = spec.base_url or "https://api.anthropic.com"
        self._price = price_per_mtok(spec)
        self._client = anthropic.AsyncAnthropic(
            api_key=os.environ.get(spec.api_key_env or "ANTHROPIC_API_KEY"),
            base_url=spec.base_url,
            max_retries=0,
            timeout=spec.timeout_s,
        )

    @property
    def model(self) -> str:
        """The model name sent to the API."""
        return self._spec.model

    @property
    def endpoint(self) -> str:
        """The API base URL."""
        return self._endpoint

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        messages = [m for m in request.messages if m["role"] != "system"]
        body: dict[str, Any] = {
            "model": self._spec.model,
            "messages": messages,
            "max_tokens": request.max_tokens or self._spec.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if system:
            body["system"] = system
        # No temperature (nor top_p): the API version anthropic SDK 2.x speaks (2026-10-21) rejects sampling
        # parameters at any value, and the SDK's create() no longer takes them (a TypeError before any request).
        if request.json_schema is not None:
            body["tools"] = [
                {"name": request.schema_name, "description": "Return the answer.", "input_schema": request.json_schema}
            ]
            body["tool_choice"] = {"type": "tool", "name": request.schema_name}
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one message request; raise ProviderError on failure."""
        started = time.perf_counter()
        try:
            reply = await self._client.messages.create(**self._body(request))
        except anthropic.AnthropicError as exc:
            raise classify(exc, self._endpoint) from exc
        latency_ms = (time.perf_counter() - started) * 1000
        text = ""
        for block in reply.content:
            if block.type == "tool_use":
                text = json.dumps(block.input, ensure_ascii=False)
                break
            if block.type == "text":
                text += block.text
        tokens_in, tokens_out = reply.usage.input_tokens, reply.usage.output_tokens
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_ms=latency_ms,
            cost_usd=call_cost(self._price, tokens_in, tokens_out),
            finish_reason=reply.stop_reason,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()
