"""`provider: scripted`: canned replies from scoregate.yaml or a file, deterministic, no network (a testing aid).

    models:
      canned:
        provider: scripted
        model: canned-1
        options:
          replies:                                    # the first rule that fits the request answers it
            - {match: "Step-by-step", reply: "## TL;DR\\nInstall it ..."}
            - {schema: ev_faithfulness_v1, match: "Rust", reply: '{"reasoning": "ok", "faithfulness_score": 4}'}
          default: "## TL;DR\\nA canned summary."   # a plain-text request that no rule fits
          score: 4                                    # generated JSON: integer-enum fields (default: the highest)

A rule with `schema` answers only requests for that JSON schema (a judge's schema is named after it), a rule
without only plain-text requests; `match` further asks for a text in the request's messages. A schema request no
rule fits gets JSON generated from its schema, so judges answer without a rule each. `replies_file` (relative to
the project folder) holds more rules, a YAML or JSON list read after the inline ones. `latency_ms` waits before
each reply. Usage is counted in words; a reply costs nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, TypeAdapter, ValidationError

from scoregate.catalog.models import ModelSpec, Strict
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderContext, ProviderError
from scoregate.providers.pricing import call_cost

GENERATED_TEXT = "scripted"
"""The string fields of generated JSON."""


class ScriptedReply(Strict):
    """One canned reply: with `schema`, for requests for that JSON schema; without, for plain-text requests."""

    match: str | None = Field(default=None, description="Text the request's messages contain.")
    schema_: str | None = Field(
        default=None, alias="schema", description="The JSON schema the request asks for, by name (a judge's name)."
    )
    reply: str = Field(description="The reply text (a JSON reply as a string).")

    def fits(self, request: CompletionRequest, text: str) -> bool:
        """True when this reply answers `request` (whose messages read `text`)."""
        if self.match is not None and self.match not in text:
            return False
        if request.json_schema is None:
            return self.schema_ is None
        return self.schema_ == request.schema_name


class ScriptedOptions(Strict):
    """`options:` of a `provider: scripted` model."""

    replies: list[ScriptedReply] = Field(default_factory=list, description="Rules, the first that fits answers.")
    replies_file: str | None = Field(default=None, description="A YAML or JSON list of more rules.")
    default: str | None = Field(default=None, description="The reply to a request without a schema no rule fits.")
    score: float | None = Field(default=None, description="Integer-enum fields of generated JSON (default: highest).")
    latency_ms: float = Field(default=0.0, ge=0, description="Wait this long before each reply.")


_RULES = TypeAdapter(list[ScriptedReply])


def json_for_schema(
    schema: dict[str, Any], *, score: int | float | None = None, count: int = 0, text: str = GENERATED_TEXT
) -> Any:
    """Return a value obeying `schema`; integer enums take `score` (None: the highest), other integers `count`."""
    kind = schema.get("type")
    if "enum" in schema and kind != "integer":
        return schema["enum"][0]
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        return {key: json_for_schema(sub, score=score, count=count, text=text) for key, sub in props.items()}
    if kind == "array":
        return [json_for_schema(schema.get("items") or {"type": "string"}, score=score, count=count, text=text)]
    if kind == "integer":
        if "enum" in schema:
            return score if score is not None else max(schema["enum"])
        return max(count, int(schema.get("minimum", count)))
    if kind == "number":
        return score if score is not None else schema.get("maximum", 1.0)
    if kind == "boolean":
        return True
    return text


class ScriptedProvider(Provider):
    """Answers from its rules; needs no key, no server and no network."""

    options_model = ScriptedOptions

    def __init__(self, spec: ModelSpec, context: ProviderContext | None = None) -> None:
        super().__init__(spec, context)
        self._options = ScriptedOptions.model_validate(spec.options)
        self._rules = [*self._options.replies, *self._file_rules()]
        script = json.dumps(
            [self._options.model_dump(mode="json"), [r.model_dump(mode="json") for r in self._rules]], sort_keys=True
        )
        self._endpoint = f"scripted:{hashlib.sha256(script.encode()).hexdigest()[:12]}"  # a new script, a new cache key

    @property
    def endpoint(self) -> str:
        """`scripted:` and a hash of the script: cached replies of another script are never reused."""
        return self._endpoint

    def price(self) -> tuple[float, float] | None:
        """Nothing: no provider is paid."""
        return super().price() or (0.0, 0.0)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Return the reply of the first rule that fits; raise ProviderError when none does."""
        if self._options.latency_ms:
            await asyncio.sleep(self._options.latency_ms / 1000)
        text = "\n".join(str(m.get("content", "")) for m in request.messages)
        reply = next((rule.reply for rule in self._rules if rule.fits(request, text)), None)
        if reply is None and request.json_schema is not None:
            reply = json.dumps(json_for_schema(request.json_schema, score=self._options.score))
        if reply is None:
            reply = self._options.default
        if reply is None:
            raise ProviderError(
                f"no scripted reply fits this request to {self.spec.model!r}: add a rule, or a `default:`",
                retryable=False,
            )
        tokens_in, tokens_out = len(text.split()), len(reply.split())
        return Completion(
            text=reply,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_ms=self._options.latency_ms,
            cost_usd=call_cost(self.price(), tokens_in, tokens_out),
            finish_reason="stop",
        )

    async def aclose(self) -> None:
        """Nothing to release."""

    def _file_rules(self) -> list[ScriptedReply]:
        if self._options.replies_file is None:
            return []
        path = Path(self._options.replies_file)
        if not path.is_absolute() and self.context.root is not None:
            path = self.context.root / path
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ScoregateError(
                f"cannot read the scripted replies of model {self.spec.model!r}: {exc}",
                where=str(path),
                hint="fix `replies_file` under the model's `options:` in scoregate.yaml",
            ) from None
        try:
            return _RULES.validate_python(loaded)
        except ValidationError as exc:
            raise ScoregateError(
                f"not a list of scripted replies: {_first_problem(exc)}",
                where=str(path),
                hint="each entry takes `reply:` and optionally `match:` and `schema:`",
            ) from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    path = ".".join(str(part) for part in error["loc"])
    return f"{path}: {error['msg']}" if path else str(error["msg"])
