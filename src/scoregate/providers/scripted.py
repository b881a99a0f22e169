"""`provider: scripted`: canned replies from scoregate.yaml or a file, no network (a testing aid and a demo model).

    models:
      canned:
        provider: scripted
        model: canned-1
        options:
          replies:                                    # the first rule that fits the request answers it
            - {match: "Step-by-step", reply: "## TL;DR\\nInstall it ..."}
            - {schema: ev_faithfulness_v1, match: "Rust", reply: '{"reasoning": "ok", "faithfulness_score": 4}'}
            - match: "Security Sync"                  # replies drawn at random, by weight (seeded)
              reply: [{text: "## TL;DR\\nShort.", weight: 3}, {text: "## TL;DR\\nA long one ...", weight: 1}]
            - {schema: ev_faithfulness_v1, reply: [{score: 3}, {score: 5}]}   # a judge's drawn score
          default: "## TL;DR\\nA canned summary."   # a plain-text request that no rule fits
          score: 4                                    # generated JSON: integer-enum fields (default: the highest)
          seed: 0                                     # the draws' seed

A rule with `schema` answers only requests for that JSON schema (a judge's schema is named after it), a rule
without only plain-text requests; `match` further asks for a text in the request's messages. A schema request no
rule fits gets JSON generated from its schema, so judges answer without a rule each. A rule whose `reply` is a list
draws one reply per call: seeded by `seed`, the request and how many times this model was sent that same request,
so a run and the same run again draw alike while repeats of an item (`run --repeat`) can differ. `replies_file`
(relative to the project folder) holds more rules, a YAML or JSON list read after the inline ones. `latency_ms`
waits before each reply. Usage is counted in words; a reply costs nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import Discriminator, Field, Tag, TypeAdapter, ValidationError, model_validator

from scoregate.catalog.models import ModelSpec, Strict
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest, Provider, ProviderContext, ProviderError
from scoregate.providers.pricing import call_cost

GENERATED_TEXT = "scripted"
"""The string fields of generated JSON."""


class ScriptedDraw(Strict):
    """One of the replies a rule draws from: a text, or for a judge a score, with its weight."""

    text: str | None = Field(default=None, description="The reply text.")
    score: float | None = Field(
        default=None, description="For a rule with `schema:`: JSON generated from the schema with this score."
    )
    weight: float = Field(default=1.0, gt=0, description="Its chance, against the rule's other replies' weights.")

    @model_validator(mode="after")
    def _text_or_score(self) -> ScriptedDraw:
        if (self.text is None) == (self.score is None):
            raise ValueError("a drawn reply needs `text:` or `score:` (one of them)")
        return self


class ScriptedReply(Strict):
    """One canned reply: with `schema`, for requests for that JSON schema; without, for plain-text requests."""

    match: str | None = Field(default=None, description="Text the request's messages contain.")
    schema_: str | None = Field(
        default=None, alias="schema", description="The JSON schema the request asks for, by name (a judge's name)."
    )
    reply: Annotated[
        Annotated[str, Tag("text")] | Annotated[list[ScriptedDraw], Field(min_length=1), Tag("drawn")],
        Discriminator(lambda value: "drawn" if isinstance(value, list) else "text"),
    ] = Field(description="The reply text (a JSON reply as a string), or a list to draw one from per call (seeded).")

    @model_validator(mode="after")
    def _scores_answer_judges(self) -> ScriptedReply:
        if isinstance(self.reply, list) and self.schema_ is None and any(d.score is not None for d in self.reply):
            raise ValueError("a drawn `score:` answers a judge: give the rule a `schema:` (the judge's name)")
        return self

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
    seed: int = Field(default=0, description="The seed of the replies drawn at random.")


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
        self._calls: dict[str, int] = {}
        """How many times each request (schema and text) was answered by a drawn reply: the draw's call number."""

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
        rule = next((rule for rule in self._rules if rule.fits(request, text)), None)
        reply = None if rule is None else self._reply(rule, request, text)
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

    def _reply(self, rule: ScriptedReply, request: CompletionRequest, text: str) -> str:
        """The rule's reply, or the one it draws for this call of this request."""
        if isinstance(rule.reply, str):
            return rule.reply
        key = hashlib.sha256(f"{request.schema_name}\x00{text}".encode()).hexdigest()
        call = self._calls.get(key, 0)
        self._calls[key] = call + 1
        seed = hashlib.sha256(f"{self._options.seed}\x00{key}\x00{call}".encode()).digest()
        draw = random.Random(int.from_bytes(seed[:8], "big")).choices(rule.reply, [d.weight for d in rule.reply])[0]
        if draw.text is not None or request.json_schema is None:
            return draw.text or ""
        score = int(draw.score) if draw.score is not None and float(draw.score).is_integer() else draw.score
        return json.dumps(json_for_schema(request.json_schema, score=score))

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
