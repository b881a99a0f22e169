"""The generic LLM judge: renders a rubric, asks a model for a JSON verdict, validates it honestly.

A reply is read as strict JSON, else as the first `{...}` object inside the text, else (a reply that is
just a number) as the primary score alone. Each field is then checked against its declared type and
range: a value the rubric does not allow is null with the reason, never clamped and never 0.

Self-consistency (`samples: k`): the same request is sent k times and each key takes the median of the
measured samples (the majority for boolean, the most common answer for categorical), with `spread` =
max - min. At temperature 0 every sample would be the same, so k > 1 samples are drawn at
`SAMPLING_TEMPERATURE`. A key is null when fewer than half the samples measured it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import statistics
from collections import Counter
from typing import Any

from scoregate.catalog.models import JudgeField
from scoregate.catalog.templates import malformed_placeholders
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import VALID_ROOTS, EvalContext, ModelCallFailed, resolve_path
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.store.records import DataType, Score, ScoreValue

NOT_PROVIDED = "(not provided)"
REASONING_FIELD = "reasoning"
SAMPLING_TEMPERATURE = 0.7
DEFAULT_REASONING = "In one or two sentences, justify the score with specific evidence."

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_BARE_NUMBER = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?\s*$")
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")

Parsed = dict[str, tuple[ScoreValue, str | None]]
"""key → (value, None) when measured, (None, reason) when not."""


class LlmJudge:
    """Scores an output with a `kind: llm_judge` rubric through one or more judge-model calls."""

    def __init__(self, spec: LlmJudgeSpec, default_model: str | None) -> None:
        self.name = spec.name
        self.version = spec.version
        self.spec = spec
        self.model = spec.model or default_model
        self._fields: list[JudgeField] = [spec.score, *spec.extra]
        self._check(spec)
        self.schema = judge_schema(self._fields)

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The primary score, the extra fields, then the reasoning text when `reasoning_key` is set."""
        keys: list[tuple[str, DataType]] = [(f.key, f.data_type) for f in self._fields]
        if self.spec.reasoning_key:
            keys.append((self.spec.reasoning_key, "text"))
        return keys

    def render_prompt(self, ctx: EvalContext) -> str:
        """Return the full user message: the rubric with variables filled in, then the answer format."""
        values = {var: _render_value(resolve_path(path, ctx)) for var, path in self.spec.variables.items()}
        rubric = _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.spec.prompt).strip()
        reasoning = (self.spec.reasoning_prompt or DEFAULT_REASONING).strip()
        return f'{rubric}\n\nReasoning (the "{REASONING_FIELD}" field): {reasoning}\n\n{self._format_instruction()}'

    def request(self, ctx: EvalContext) -> CompletionRequest:
        """Return the completion request sent to the judge model for this item."""
        temperature = self.spec.temperature
        if self.spec.samples > 1 and temperature == 0:
            temperature = SAMPLING_TEMPERATURE
        return CompletionRequest(
            messages=(
                {"role": "system", "content": "You are a strict, careful evaluator. Reply with JSON only."},
                {"role": "user", "content": self.render_prompt(ctx)},
            ),
            temperature=temperature,
            max_tokens=self.spec.max_tokens,
            json_schema=self.schema,
            schema_name=_SCHEMA_NAME.sub("_", self.spec.name)[:64] or "judge",
        )

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return the judge's scores for one item; every key null with the reason when the call fails."""
        request = self.request(ctx)
        # Each sample gets its own `extra` marker so the response cache keeps k distinct answers.
        requests = (
            [request]
            if self.spec.samples == 1
            else [dataclasses.replace(request, extra={**request.extra, "sample": i}) for i in range(self.spec.samples)]
        )
        replies = await asyncio.gather(*(self._ask(ctx, r) for r in requests))
        return self._combine(list(replies))

    def parse(self, completion: Completion) -> Parsed:
        """Read one reply into key → (value, reason); never raises."""
        keys = [REASONING_FIELD, *(f.key for f in self._fields)]
        text = completion.text or ""
        cut = " (the reply was cut off at max_tokens)" if completion.finish_reason == "length" else ""
        reply = _find_object(text)
        if isinstance(reply, dict):
            parsed: Parsed = {REASONING_FIELD: _check_reasoning(reply)}
            for f in self._fields:
                parsed[f.key] = _check_field(f, _get(reply, f.key))
            return parsed
        if _BARE_NUMBER.match(text):
            parsed = {k: (None, f"judge replied only a number ({text.strip()}), no {k!r}") for k in keys}
            parsed[self.spec.score.key] = _check_field(self.spec.score, (True, _number(text)))
            return parsed
        shown = text.strip()[:80]
        why = "judge reply is empty" if not shown else f"judge reply is not JSON: {shown!r}"
        return dict.fromkeys(keys, (None, why + cut))

    async def _ask(self, ctx: EvalContext, request: CompletionRequest) -> Parsed:
        """One judge call, parsed; a failed call makes every key null with the failure."""
        try:
            completion = await ctx.call_model(self.model, request, f"judge:{self.spec.name}")
        except ModelCallFailed as exc:
            keys = [REASONING_FIELD, *(f.key for f in self._fields)]
            return dict.fromkeys(keys, (None, f"judge call failed: {exc}"))
        return self.parse(completion)

    def _combine(self, samples: list[Parsed]) -> list[Score]:
        """Merge the samples into one score per key; the reasoning goes in the primary score's comment."""
        primary = self.spec.score.key
        merged = {f.key: _merge(f, [s[f.key] for s in samples]) for f in self._fields}
        reasoning, reasoning_why = _pick_reasoning(samples, primary, merged[primary][0])
        scores = []
        for f in self._fields:
            value, reason, spread = merged[f.key]
            score = Score(
                name=f.key,
                value=value,
                data_type=f.data_type,
                evaluator=self.name,
                reason=reason if value is None else None,
                spread=spread,
            )
            if f.key == primary:
                score.comment = reasoning
                if len(samples) > 1:
                    shown = ", ".join(str(s[primary][0]) for s in samples if s[primary][0] is not None)
                    tail = f"[{len(samples)} samples; measured: {shown or 'none'}]"
                    score.comment = f"{reasoning}\n{tail}" if reasoning else tail
            scores.append(score)
        if self.spec.reasoning_key:
            key = self.spec.reasoning_key
            scores.append(
                Score(name=key, value=reasoning, data_type="text", evaluator=self.name)
                if reasoning is not None
                else Score.missing(key, "text", self.name, reasoning_why)
            )
        return scores

    def _format_instruction(self) -> str:
        """The strict answer-format paragraph appended to every prompt."""
        lines = [
            "Answer format: reply with one JSON object and nothing else (no markdown, no code fence), "
            "with exactly these keys in this order:",
            f'- "{REASONING_FIELD}": string, your justification, written before the score.',
        ]
        for f in self._fields:
            lines.append(f'- "{f.key}": {_describe(f)}.' + (f" {f.instruction.strip()}" if f.instruction else ""))
        return "\n".join(lines)

    def _check(self, spec: LlmJudgeSpec) -> None:
        """Raise a user error for a rubric that cannot be asked or parsed."""
        where = f"evaluator {spec.name}"
        for var in _PLACEHOLDER.findall(spec.prompt):
            if var not in spec.variables:
                raise ScoregateError(
                    f"prompt: uses {{{{{var}}}}} but `variables:` has no {var!r}",
                    where=where,
                    hint=f"add `{var}: <path>` under variables, e.g. `input.{var}`",
                )
        for var, path in spec.variables.items():
            if path.partition(".")[0] not in VALID_ROOTS:
                raise ScoregateError(
                    f"variables.{var}: reads unknown source {path!r}",
                    where=where,
                    hint="use output, expected_output, input.<field> or metadata.<field>",
                )
        keys = [f.key for f in self._fields] + ([spec.reasoning_key] if spec.reasoning_key else [])
        for key in keys:
            if key == REASONING_FIELD or keys.count(key) > 1:
                raise ScoregateError(
                    f"score key {key!r} is used twice or is reserved",
                    where=where,
                    hint="give each field a distinct key other than 'reasoning'",
                )
        for number, f in enumerate(self._fields):
            at = "score" if number == 0 else f"extra.{number - 1}"
            if f.data_type == "categorical" and not f.categories:
                raise ScoregateError(f"{at}.categories: categorical field {f.key!r} needs `categories:`", where=where)
            if f.range is not None and f.range[0] > f.range[1]:
                raise ScoregateError(
                    f"{at}.range: field {f.key!r} has range {list(f.range)} with min > max", where=where
                )
        if broken := malformed_placeholders(spec.prompt):
            raise ScoregateError(
                f"prompt: malformed placeholder near {broken[0]!r}",
                where=where,
                hint="write placeholders as {{name}}; a broken one would be sent to the judge literally",
            )


def judge_schema(fields: list[JudgeField]) -> dict[str, Any]:
    """Return the JSON schema of the reply: `reasoning` first, then each field, all required."""
    properties: dict[str, Any] = {REASONING_FIELD: {"type": "string"}}
    for f in fields:
        properties[f.key] = _field_schema(f)
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _field_schema(f: JudgeField) -> dict[str, Any]:
    """The schema of one field; integer ranges become an enum, which grammar-constrained decoders honour."""
    if f.data_type == "boolean":
        return {"type": "integer", "enum": [0, 1]}
    if f.data_type == "categorical":
        return {"type": "string", "enum": list(f.categories or [])}
    if f.data_type == "text":
        return {"type": "string"}
    if f.range is None:
        return {"type": "integer", "minimum": 0}
    lo, hi = f.range
    if lo == int(lo) and hi == int(hi):
        return {"type": "integer", "enum": list(range(int(lo), int(hi) + 1))}
    return {"type": "number", "minimum": lo, "maximum": hi}


def _describe(f: JudgeField) -> str:
    """The field's allowed values, in words, for the answer-format instruction."""
    if f.data_type == "boolean":
        return "0 or 1"
    if f.data_type == "categorical":
        return "one of " + ", ".join(json.dumps(c) for c in f.categories or [])
    if f.data_type == "text":
        return "string"
    if f.range is None:
        return "whole number >= 0 (a count)"
    kind = "integer" if _integral_range(f) else "number"
    return f"{kind} from {_fmt(f.range[0])} to {_fmt(f.range[1])}"


def _render_value(value: Any) -> str:
    """A variable's text in the prompt; None or blank renders as NOT_PROVIDED."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NOT_PROVIDED
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return str(value)


def _find_object(text: str) -> Any:
    """The reply as JSON, else the first `{...}` object in it, else None."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    decoder = json.JSONDecoder(strict=False)
    start = text.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None


def _get(reply: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(present, value) for `key`, matching the key exactly or else ignoring case."""
    if key in reply:
        return True, reply[key]
    for k, v in reply.items():
        if isinstance(k, str) and k.lower() == key.lower():
            return True, v
    return False, None


def _check_reasoning(reply: dict[str, Any]) -> tuple[ScoreValue, str | None]:
    present, value = _get(reply, REASONING_FIELD)
    if not present or value is None:
        return None, f"judge reply has no {REASONING_FIELD!r} field"
    return _as_text(REASONING_FIELD, value)


def _as_text(key: str, value: Any) -> tuple[ScoreValue, str | None]:
    if isinstance(value, str):
        return value.strip(), None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(v.strip() for v in value), None
    return None, f"judge replied {_show(value)} for {key!r}, not text"


def _check_field(f: JudgeField, found: tuple[bool, Any]) -> tuple[ScoreValue, str | None]:
    """Validate one field of the reply: the value when allowed, else None and the specific reason."""
    present, value = found
    if not present:
        return None, f"judge reply has no {f.key!r} field"
    if value is None:
        return None, f"judge replied null for {f.key!r}"
    if f.data_type == "text":
        return _as_text(f.key, value)
    if f.data_type == "categorical":
        if isinstance(value, str):
            for c in f.categories or []:
                if value.strip().lower() == c.lower():
                    return c, None
        return None, f"judge replied {_show(value)}, not one of {', '.join(f.categories or [])}"
    number = _number(value)
    if f.data_type == "boolean":
        if isinstance(value, bool):
            return int(value), None
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return int(value.strip().lower() == "true"), None
        if number in (0, 1):
            return int(number), None
        return None, f"judge replied {_show(value)}, not 0 or 1"
    if number is None:
        return None, f"judge replied {_show(value)}, not a number"
    if f.range is None:
        if number != int(number) or number < 0:
            return None, f"judge replied {_show(value)}, not a whole number >= 0"
        return int(number), None
    lo, hi = f.range
    span = f"{_fmt(lo)}-{_fmt(hi)}"
    if _integral_range(f) and number != int(number):
        return None, f"judge replied {_show(value)}, not a whole number in {span}"
    if not lo <= number <= hi:
        return None, f"judge replied {_show(value)}, outside {span}"
    return (int(number) if _integral_range(f) else number), None


def _number(value: Any) -> float | int | None:
    """A JSON number or a numeric string as a number; None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and _BARE_NUMBER.match(value):
        text = value.strip()
        return float(text) if "." in text else int(text)
    return None


def _merge(f: JudgeField, samples: list[tuple[ScoreValue, str | None]]) -> tuple[ScoreValue, str | None, float | None]:
    """(value, reason, spread) of one key over the samples."""
    if len(samples) == 1:
        return samples[0][0], samples[0][1], None
    measured = [v for v, _ in samples if v is not None]
    if len(measured) * 2 < len(samples):
        first = next((why for v, why in samples if v is None), None)
        return None, f"only {len(measured)} of {len(samples)} judge samples measured {f.key}: {first}", None
    if f.data_type in ("numeric", "boolean"):
        numbers = [float(v) for v in measured if isinstance(v, int | float)]
        spread = max(numbers) - min(numbers)
        if f.data_type == "numeric":
            middle = statistics.median(numbers)
            return (int(middle) if middle == int(middle) else middle), None, spread
        ones = sum(1 for n in numbers if n == 1)
        if ones * 2 == len(numbers):
            return None, f"judge samples split evenly on {f.key} ({ones} said 1, {ones} said 0)", spread
        return int(ones * 2 > len(numbers)), None, spread
    if f.data_type == "categorical":
        ranked = Counter(measured).most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            return None, f"judge samples tie on {f.key}: {ranked[0][0]!r} and {ranked[1][0]!r}", None
        return ranked[0][0], None, None
    return measured[0], None, None


def _pick_reasoning(samples: list[Parsed], primary: str, value: ScoreValue) -> tuple[str | None, str]:
    """The reasoning of the sample whose primary score is nearest the merged value, or why there is none."""
    usable = [s for s in samples if isinstance(s[REASONING_FIELD][0], str)]
    if len(usable) * 2 < len(samples) or not usable:
        first = next((s[REASONING_FIELD][1] for s in samples if s[REASONING_FIELD][1]), None)
        return None, first or "no judge reasoning"

    def distance(s: Parsed) -> float:
        v = s[primary][0]
        if v == value:
            return 0.0
        if isinstance(v, int | float) and isinstance(value, int | float):
            return abs(float(v) - float(value))
        return float("inf")

    best = min(usable, key=distance)
    return str(best[REASONING_FIELD][0]), ""


def _integral_range(f: JudgeField) -> bool:
    return f.range is not None and all(x == int(x) for x in f.range)


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def _show(value: Any) -> str:
    """A reply value as the user should see it in a reason (short)."""
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    text = str(value) if is_number else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
