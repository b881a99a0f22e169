"""OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama): one HTTP POST per call.

The wire format is the Chat Completions API; the request is sent with a pooled `httpx2.AsyncClient` rather than
the openai SDK, whose import alone costs more than half a second of a run's start and ~1 ms of CPU per call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import httpx2

from scoregate.catalog.models import ModelSpec, StructuredOutputStyle
from scoregate.catalog.urls import check_url
from scoregate.errors import ProviderUnavailable
from scoregate.providers import local_server
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderContext, ProviderError
from scoregate.providers.pricing import call_cost
from scoregate.support.redaction import redact

DEFAULT_BASE_URL = "https://api.openai.com/v1"

# USD per million (input, output) tokens, from OpenAI's public price list.
OPENAI_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}


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


def classify_http_error(exc: Exception, endpoint: str) -> ProviderError:
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


class OpenAICompatibleProvider(Provider):
    """Chat completions against any OpenAI-compatible endpoint; a key is required only by OpenAI's own API."""

    key_env_var: ClassVar[str | None] = "OPENAI_API_KEY"
    key_hint = "OpenAI's keys are made at https://platform.openai.com/api-keys"
    default_base_url: ClassVar[str | None] = DEFAULT_BASE_URL
    structured_output: ClassVar[StructuredOutputStyle | None] = "json_schema"
    known_prices: ClassVar[Mapping[str, tuple[float, float]]] = OPENAI_PRICES
    unreachable_hint = "check base_url in scoregate.yaml (or OPENAI_BASE_URL) and that the server is running"
    not_found_hint = (
        "check base_url (it usually ends in /v1) and the model name in scoregate.yaml; "
        "every call of this run would get the same 404"
    )

    def __init__(self, spec: ModelSpec, context: ProviderContext | None = None) -> None:
        super().__init__(spec, context)
        self._style: StructuredOutputStyle = spec.structured_output or self.structured_output or "none"
        self._endpoint = self.base_url().rstrip("/")
        self._price = self.price()
        limits = httpx2.Limits(max_connections=spec.max_connections, max_keepalive_connections=spec.max_connections)
        self._url = self._endpoint + "/chat/completions"
        self._client = httpx2.AsyncClient(
            limits=limits,
            timeout=spec.timeout_s,
            verify=tls_verify(self._endpoint),
            headers={"Authorization": f"Bearer {self.api_key() or 'not-needed'}"},
        )

    def base_url(self) -> str:
        """Where requests go: the model's `base_url`, else `OPENAI_BASE_URL`, else OpenAI's API."""
        if self.spec.base_url:
            return self.spec.base_url
        from_env = os.environ.get("OPENAI_BASE_URL", "").strip()
        if from_env:
            check_url(from_env, where="OPENAI_BASE_URL")
        return from_env or DEFAULT_BASE_URL

    def key_variable(self) -> str | None:
        """`api_key_env` when set; else OPENAI_API_KEY, but only for OpenAI's own API (a vLLM server needs none)."""
        if self.spec.api_key_env:
            return self.spec.api_key_env
        return self.key_env_var if self._endpoint.startswith(DEFAULT_BASE_URL) else None

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self._endpoint

    def on_embedded_server(self) -> bool:
        """True when its endpoint is the embedded llama.cpp server's: its failures get that server's hints."""
        return self._endpoint.startswith(local_server.local_base_url())

    def unreachable(self, name: str) -> ProviderUnavailable:
        """On the embedded server: still loading (`model serve` started it, it does not listen yet) or not started."""
        if not self.on_embedded_server():
            return super().unreachable(name)
        root = self.context.root
        pid = local_server.server_pid(root, local_server.port_of(self.endpoint)) if root is not None else None
        if pid is None:
            return ProviderUnavailable(
                f"model {name!r}: cannot reach {self.endpoint} (connection refused or failed)",
                hint=local_server.SERVE_HINT,
            )
        return ProviderUnavailable(
            f"model {name!r}: the local model server (pid {pid}) is running but does not accept "
            f"connections at {self.endpoint} yet",
            hint="it is probably still loading the model: wait a moment and retry "
            "(`scoregate model status` shows it; its log is in .scoregate/local-model/)",
        )

    def busy_advice(self) -> str:
        """On the embedded server: that it is busy, naming the project that started it when it is another one."""
        if not self.on_embedded_server():
            return self.busy_hint
        owner = local_server.server_owner(local_server.port_of(self.endpoint))
        root = self.context.root
        if owner is None or (root is not None and Path(owner) == root.resolve()):
            return local_server.BUSY_HINT
        return f"{local_server.BUSY_HINT}. It was started by the project in {owner}: {local_server.OWN_SERVER_HINT}"

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.spec.model, "messages": list(request.messages)}
        temperature = request.temperature if request.temperature is not None else self.spec.temperature
        max_tokens = request.max_tokens or self.spec.max_tokens
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
            raise classify_http_error(exc, self._endpoint) from exc
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
