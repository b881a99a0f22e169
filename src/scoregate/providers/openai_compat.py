"""OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama): one HTTP POST per call.

The wire format is the Chat Completions API; the request is sent with a pooled `httpx2.AsyncClient` rather than
the openai SDK, whose import alone costs more than half a second of a run's start and ~1 ms of CPU per call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import httpx2

from scoregate.catalog.models import ModelSpec, StructuredOutputStyle
from scoregate.catalog.urls import check_url
from scoregate.providers.base import Completion, CompletionRequest, ProviderError
from scoregate.providers.pricing import call_cost, price_per_mtok
from scoregate.support.redaction import redact

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def response_format_args(
    style: StructuredOutputStyle, schema: dict[str, Any], name: str, *, strict: bool = True
) -> dict[str, Any]:
    """Return the request fields that ask an endpoint of this style for JSON obeying `schema`."""
    if style == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
        }
    if style == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if style == "guided_json":
        return {"extra_body": {"guided_json": schema}}
    return {}


def tls_verify(url: str) -> bool:
    """Whether a client for `url` needs certificate checks: not for plain http (loading the CA store takes 0.1 s)."""
    return not url.startswith("http://")


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Return the delay a `Retry-After` (or `retry-after-ms`) header asks for, in seconds."""
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def classify(exc: Exception, endpoint: str) -> ProviderError:
    """Map a transport exception to a ProviderError that says whether to retry."""
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError(f"timed out calling {endpoint}", retryable=True)
    if isinstance(exc, httpx2.TransportError):
        return ProviderError(
            f"cannot connect to {endpoint}: {str(exc) or type(exc).__name__}",
            retryable=True,
            unreachable=True,
        )
    return ProviderError(f"{type(exc).__name__}: {exc}", retryable=False)


def status_error(response: httpx2.Response, endpoint: str) -> ProviderError:
    """Return the ProviderError for an HTTP error reply, with the endpoint's own message."""
    status = response.status_code
    retryable = status in (408, 409, 429) or status >= 500
    return ProviderError(
        f"HTTP {status} from {endpoint}: {short_error(_error_message(response))}",
        retryable=retryable,
        status=status,
        retry_after=retry_after_seconds(response.headers),
    )


def _error_message(response: httpx2.Response) -> str:
    """Return `error.message` of an OpenAI-style error body, else the body text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return response.text.strip()


def short_error(text: str, limit: int = 300) -> str:
    """An endpoint's error text, secrets masked first (a cut would leave part of an echoed key unmasked), then cut."""
    text = redact(text)
    return text if len(text) <= limit else text[:limit] + "…"


class OpenAICompatibleProvider:
    """Chat completions against any OpenAI-compatible endpoint."""

    def __init__(self, spec: ModelSpec, *, default_style: StructuredOutputStyle = "json_schema") -> None:
        self._spec = spec
        self._style: StructuredOutputStyle = spec.structured_output or default_style
        from_env = None if spec.base_url else os.environ.get("OPENAI_BASE_URL", "").strip()
        if from_env:
            check_url(from_env, where="OPENAI_BASE_URL")
        self._endpoint = (spec.base_url or from_env or DEFAULT_BASE_URL).rstrip("/")
        key_env = spec.api_key_env or "OPENAI_API_KEY"
        self._price = price_per_mtok(spec)
        limits = httpx2.Limits(max_connections=spec.max_connections, max_keepalive_connections=spec.max_connections)
        self._url = self._endpoint + "/chat/completions"
        self._client = httpx2.AsyncClient(
            limits=limits,
            timeout=spec.timeout_s,
            verify=tls_verify(self._endpoint),
            headers={"Authorization": f"Bearer {os.environ.get(key_env) or 'not-needed'}"},
        )

    @property
    def model(self) -> str:
        """The model name sent to the endpoint."""
        return self._spec.model

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self._endpoint

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self._spec.model, "messages": list(request.messages)}
        temperature = request.temperature if request.temperature is not None else self._spec.temperature
        max_tokens = request.max_tokens or self._spec.max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.json_schema is not None:
            args = response_format_args(
                self._style, request.json_schema, request.schema_name, strict=request.schema_strict
            )
            body.update(args.pop("extra_body", {}))
            body.update(args)
        return body

    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one chat completion; raise ProviderError on failure."""
        started = time.perf_counter()
        try:
            response = await self._client.post(self._url, json=self._body(request))
        except httpx2.HTTPError as exc:
            raise classify(exc, self._endpoint) from exc
        latency_ms = (time.perf_counter() - started) * 1000
        if response.status_code >= 400:
            raise status_error(response, self._endpoint)
        try:
            payload = response.json()
            choice = payload["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"malformed reply from {self._endpoint}: {exc!r}", retryable=True) from exc
        usage = payload.get("usage") or {}
        tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_ms=latency_ms,
            cost_usd=call_cost(self._price, tokens_in, tokens_out),
            finish_reason=choice.get("finish_reason"),
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.aclose()
