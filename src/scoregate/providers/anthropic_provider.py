"""Anthropic Messages API through `anthropic.AsyncAnthropic`; JSON output through a forced tool call.

Requests carry no sampling parameters: `temperature` and `top_p` of a model, prompt or judge are not sent to
Anthropic models (API version 2026-10-21 refuses them), so those models sample at their own default.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic

from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderContext, ProviderError
from scoregate.providers.openai_compat import retry_after_seconds, short_error
from scoregate.providers.pricing import call_cost

DEFAULT_MAX_TOKENS = 1024
DEFAULT_BASE_URL = "https://api.anthropic.com"

# USD per million (input, output) tokens, from Anthropic's public price list.
ANTHROPIC_PRICES: dict[str, tuple[float, float]] = {
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-3-5-sonnet-latest": (3.00, 15.00),
    "claude-sonnet-4-0": (3.00, 15.00),
}


def classify_anthropic_error(exc: Exception, endpoint: str) -> ProviderError:
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


class AnthropicProvider(Provider):
    """Claude models; a JSON schema becomes a single forced tool whose input is the answer."""

    key_env_var = "ANTHROPIC_API_KEY"
    needs_key = True
    key_hint = "Anthropic's keys are made at https://console.anthropic.com/settings/keys"
    default_base_url = DEFAULT_BASE_URL
    known_prices = ANTHROPIC_PRICES
    unreachable_hint = "check your network, and base_url in scoregate.yaml if you set one"

    def __init__(self, spec: ModelSpec, context: ProviderContext | None = None) -> None:
        super().__init__(spec, context)
        self._endpoint = self.base_url() or DEFAULT_BASE_URL
        self._price = self.price()
        self._client = anthropic.AsyncAnthropic(
            api_key=self.api_key(),
            base_url=spec.base_url,
            max_retries=0,
            timeout=spec.timeout_s,
        )

    @property
    def endpoint(self) -> str:
        """The API base URL."""
        return self._endpoint

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        messages = [m for m in request.messages if m["role"] != "system"]
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": messages,
            "max_tokens": request.max_tokens or self.spec.max_tokens or DEFAULT_MAX_TOKENS,
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
            raise classify_anthropic_error(exc, self._endpoint) from exc
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
