"""The one async model interface every provider implements, its request/response types, and the facts a provider
owns (key variable, default base URL, structured-output style, connections, prices, hints): the code that calls
models asks a provider for them and never branches on its name."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from scoregate.catalog.config_models import Settings
from scoregate.catalog.models import ModelSpec, StructuredOutputStyle
from scoregate.errors import ProviderUnavailable


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


@dataclass(frozen=True)
class ProviderContext:
    """What a provider may know of the project it serves: its folder and its settings (e.g. `local_port`)."""

    root: Path | None = None
    settings: Settings = field(default_factory=Settings)


class Provider(ABC):
    """An async model endpoint that owns its facts.

    A provider sets the class attributes below (simonw/llm's `needs_key` / `key_env_var`) and implements
    `endpoint`, `complete` and `aclose`; the methods turn the facts into what a run needs (the key to check, the
    connections to open, the price, the error and hint when the endpoint fails its one-token check).
    """

    key_env_var: ClassVar[str | None] = None
    """The variable its key is read from when the model sets no `api_key_env` (None: it takes no key)."""
    needs_key: ClassVar[bool] = False
    """True: a run stops before its first request when the key variable is unset or empty."""
    key_hint: ClassVar[str] = ""
    """Where such a key comes from: added to the hint when it is missing."""
    default_base_url: ClassVar[str | None] = None
    """Where requests go when the model sets no `base_url` (None: nowhere on the network)."""
    structured_output: ClassVar[StructuredOutputStyle | None] = None
    """How it asks for JSON when the model sets no `structured_output` (None: a way of its own, e.g. a tool call)."""
    default_connections: ClassVar[int | None] = None
    """At most this many calls in flight when the model sets no `max_connections` (None: its default, 16)."""
    known_prices: ClassVar[Mapping[str, tuple[float, float]]] = {}
    """USD per million (input, output) tokens of the models it knows, from the provider's public price list."""
    unreachable_hint: ClassVar[str] = "check base_url in scoregate.yaml and that the server is running"
    """What to do when its endpoint refuses or drops the connection."""
    busy_hint: ClassVar[str] = "retry when the server is less busy, or raise timeout_s for this model in scoregate.yaml"
    """What to do when its endpoint accepts the connection but does not answer in time."""
    not_found_hint: ClassVar[str] = (
        "check base_url and the model name in scoregate.yaml; every call of this run would get the same 404"
    )
    """What to do when its endpoint answers 404 (a wrong path or model name)."""
    options_model: ClassVar[type[BaseModel] | None] = None
    """The model of its `options:` in scoregate.yaml (None: it takes none)."""

    def __init__(self, spec: ModelSpec, context: ProviderContext | None = None) -> None:
        self.spec = spec
        self.context = context or ProviderContext()

    @property
    def model(self) -> str:
        """The model name sent to the endpoint."""
        return self.spec.model

    @property
    @abstractmethod
    def endpoint(self) -> str:
        """Where requests go (a URL, or the provider's name); never holds a key."""

    @abstractmethod
    async def complete(self, request: CompletionRequest) -> Completion:
        """Send one request; raise ProviderError on failure."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release connections."""

    def base_url(self) -> str | None:
        """Where requests go: the model's `base_url`, else the provider's default (None: nowhere on the network)."""
        return self.spec.base_url or self.default_base_url

    def api_key(self) -> str | None:
        """The key this model sends (from `api_key_env`, else the provider's variable), or None."""
        variable = self.spec.api_key_env or self.key_env_var
        return (os.environ.get(variable) or None) if variable else None

    def key_variable(self) -> str | None:
        """The variable that must hold this model's key before a run starts, or None when it needs none."""
        return self.spec.api_key_env or (self.key_env_var if self.needs_key else None)

    def missing_key(self, name: str) -> ProviderUnavailable | None:
        """The error that stops a run of model `name` when its key variable is unset or empty, else None."""
        variable = self.key_variable()
        if variable is None or os.environ.get(variable, "").strip():
            return None
        where = f"scoregate.yaml: models.{name}.api_key_env" if self.spec.api_key_env else None
        hint = f"export {variable}=... before the run (or fix api_key_env in scoregate.yaml)"
        return ProviderUnavailable(
            f"model {name!r}: its API key variable {variable} is not set (or empty)",
            where=where,
            hint=f"{hint}; {self.key_hint}" if self.key_hint else hint,
        )

    def max_connections(self) -> int:
        """How many calls may be in flight to this model at once."""
        if self.default_connections is not None and "max_connections" not in self.spec.model_fields_set:
            return min(self.spec.max_connections, self.default_connections)
        return self.spec.max_connections

    def price(self) -> tuple[float, float] | None:
        """USD per million (input, output) tokens: the model's own prices, else the provider's list, else None."""
        spec = self.spec
        if spec.input_cost_per_mtok is not None and spec.output_cost_per_mtok is not None:
            return spec.input_cost_per_mtok, spec.output_cost_per_mtok
        return self.known_prices.get(spec.model)

    def unreachable(self, name: str) -> ProviderUnavailable:
        """The error that stops a run whose one-token check to model `name` could not connect."""
        return ProviderUnavailable(
            f"model {name!r}: cannot reach {self.endpoint} (connection refused or failed)", hint=self.unreachable_hint
        )

    def busy(self, name: str) -> ProviderUnavailable:
        """The error that stops a run whose one-token check to model `name` was accepted but not answered in time."""
        return ProviderUnavailable(
            f"model {name!r}: {self.endpoint} accepted the connection but did not answer a one-token request "
            f"within {self.spec.timeout_s:g}s: the server is up but busy",
            hint=self.busy_advice(),
        )

    def busy_advice(self) -> str:
        """The hint of `busy`."""
        return self.busy_hint

    def refused(self, name: str, error: ProviderError) -> ProviderUnavailable:
        """The error that stops a run whose one-token check to model `name` was refused (401, 403, 404)."""
        if error.status == 404:
            hint = self.not_found_hint
        else:
            variable = self.spec.api_key_env or self.key_env_var or "the key variable"
            hint = f"check the key in {variable} and that it may use model {self.spec.model!r}"
        return ProviderUnavailable(
            f"model {name!r}: {self.endpoint} refused a one-token test request: {error}", hint=hint
        )

    def start_note(self) -> str | None:
        """A line to show as a run that uses this model starts (e.g. whose server it shares), or None."""
        return None
