"""`scoregate connection-test`: can this OpenAI-compatible endpoint (vLLM, llama.cpp...) serve structured output?

Two checks, the ones an extraction run depends on: the model list answers, and one structured request (a small
JSON Schema, sent exactly as a run sends it) comes back as JSON that obeys the schema.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from scoregate.catalog.models import ModelSpec, StructuredOutputStyle
from scoregate.catalog.urls import check_url
from scoregate.errors import ProviderUnavailable, ScoregateError
from scoregate.providers.base import CompletionRequest, ProviderError
from scoregate.providers.openai_compat import OpenAICompatibleProvider
from scoregate.support.redaction import redact
from scoregate.tracks.extraction.metrics import score_extraction

SAMPLE_TEXT = "Dr. Sarah Johnson, 41, works as a cardiologist at Metro General Hospital in Leeds."
SAMPLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Full name, without title"},
        "age": {"type": "integer"},
        "occupation": {"type": "string"},
        "workplace": {"type": "string"},
    },
    "required": ["name", "age", "occupation", "workplace"],
    "additionalProperties": False,
}
SAMPLE_EXPECTED = {
    "name": "Sarah Johnson",
    "age": 41,
    "occupation": "cardiologist",
    "workplace": "Metro General Hospital",
}
SYSTEM = (
    "You are a precise data extraction assistant. Extract information from the text according to the JSON "
    "schema. Only extract information explicitly stated in the text."
)


@dataclass
class ConnectionReport:
    """What the connection test found; `ok` when the structured reply is JSON that obeys the schema."""

    base_url: str
    models: list[str]
    model: str
    style: str
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reply: str = ""
    parsed: bool = False
    schema_valid: bool = False
    errors: list[str] = field(default_factory=list)
    field_f1: float | None = None

    @property
    def ok(self) -> bool:
        """True when the endpoint returned schema-valid JSON."""
        return self.parsed and self.schema_valid

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {**self.__dict__, "ok": self.ok}


def _headers(api_key_env: str | None) -> dict[str, str]:
    key = os.environ.get(api_key_env or "OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


async def list_models(base_url: str, *, api_key_env: str | None = None, timeout_s: float = 10.0) -> list[str]:
    """Return the model ids `GET {base_url}/models` lists; raise ScoregateError naming the URL and the fix."""
    url = base_url.rstrip("/") + "/models"
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(url, headers=_headers(api_key_env))
    except httpx.HTTPError as exc:
        raise ProviderUnavailable(
            f"cannot reach {url} ({type(exc).__name__})",
            hint="start the server (e.g. `vllm serve MODEL`) and pass its OpenAI base URL, ending in /v1",
        ) from None
    if response.status_code != 200:
        raise ScoregateError(
            f"GET {url} answered HTTP {response.status_code}: {redact(response.text)[:200]}",
            hint="check the base URL (it usually ends in /v1) and the API key variable (--api-key-env)",
        )
    try:
        return [str(m["id"]) for m in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        raise ScoregateError(
            f"GET {url} did not answer an OpenAI model list: {redact(response.text)[:200]}",
            hint="point --base-url at an OpenAI-compatible API (vLLM, llama.cpp server, Ollama's /v1)",
        ) from None


async def connection_test(
    base_url: str,
    *,
    model: str | None = None,
    api_key_env: str | None = None,
    style: StructuredOutputStyle = "json_schema",
    timeout_s: float = 60.0,
) -> ConnectionReport:
    """List the endpoint's models, send one structured request, and report whether the reply obeys the schema."""
    check_url(base_url, where="--base-url")
    models = await list_models(base_url, api_key_env=api_key_env, timeout_s=min(timeout_s, 10.0))
    if model is None:
        if not models:
            raise ScoregateError(f"{base_url} lists no model", hint="load a model in the server, or pass --model")
        model = models[0]
    elif model not in models:
        raise ScoregateError(
            f"model {model!r} is not served at {base_url}; it serves: {', '.join(models) or 'nothing'}",
            hint="pass one of those names with --model",
        )
    spec = ModelSpec(
        provider="openai",
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        structured_output=style,
        timeout_s=timeout_s,
        max_retries=0,
    )
    provider = OpenAICompatibleProvider(spec)
    request = CompletionRequest(
        messages=(
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Text:\n{SAMPLE_TEXT}\n\nReply with JSON matching the schema."},
        ),
        temperature=0.0,
        max_tokens=200,
        json_schema=SAMPLE_SCHEMA,
        schema_name="connection_test",
    )
    report = ConnectionReport(base_url=base_url, models=models, model=model, style=style)
    try:
        completion = await provider.complete(request)
    except ProviderError as exc:
        raise ScoregateError(
            f"the structured request to {model!r} failed: {exc}",
            hint="if the server rejects `response_format`, try another --style (json_object_schema, guided_json)",
        ) from None
    finally:
        await provider.aclose()
    scores = score_extraction(completion.text, SAMPLE_EXPECTED, SAMPLE_SCHEMA)
    report.latency_ms, report.tokens_in, report.tokens_out = (
        completion.latency_ms,
        completion.tokens_in,
        completion.tokens_out,
    )
    report.reply = completion.text
    report.parsed, report.schema_valid = scores.parsed, bool(scores.schema_valid)
    report.errors = list(scores.errors)
    report.field_f1 = scores.f1("partial") if scores.valid else None
    return report


def run_connection_test(
    base_url: str,
    *,
    model: str | None = None,
    api_key_env: str | None = None,
    style: StructuredOutputStyle = "json_schema",
    timeout_s: float = 60.0,
) -> ConnectionReport:
    """Synchronous `connection_test`, for the CLI and scripts."""
    return asyncio.run(
        connection_test(base_url, model=model, api_key_env=api_key_env, style=style, timeout_s=timeout_s)
    )
