"""The generic LLM judge: renders a rubric, asks a model for a JSON verdict, validates it honestly.

A reply is read as strict JSON, else as the first `{...}` object inside the text, else (a reply that is
just a number) as the primary score alone. Each field is then checked against its declared type and
range: a value the rubric does not allow is null with the reason, never clamped and never 0.

Self-consistency (`samples: k`): the same request is sent k times and each key takes the median of the
measured samples (the majority for boolean, the most common answer for categorical), with `spread` =
max - min. At temperature 0 every sample would be the same, so k > 1 samples are drawn at
`SAMPLING_TEMPERATURE`. A key is null when fewer than half the samples measured it.

A cascade (`cascade:`, `CascadeJudge`): the same rubric on a cheaper first model is asked `cascade.samples` times;
its answer is the merged answer and its confidence the share of the samples that gave it (no provider here
returns log-probabilities, so agreement across repeated samples is the confidence: `scoregate.analysis.cascade`).
At or above the threshold a saved cascade calibration chose, the item keeps the first judge's scores; below it, or
without a threshold for this judge version, the strong judge scores the item. Either way the first judge's answer
and confidence are written as `<score>_first` and `<score>_first_confidence`, so any run of the judge over
human-labelled items calibrates it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any

from scoregate.analysis.cascade import sample_confidence
from scoregate.catalog.models import JudgeField
from scoregate.catalog.templates import malformed_placeholders
from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import VALID_ROOTS, EvalContext, ModelCallFailed, resolve_path
from scoregate.scoring.judge_reply import (
    BARE_NUMBER,
    REASONING_FIELD,
    Parsed,
    check_field,
    check_reasoning,
    field_in_reply,
    find_object,
    integral_range,
    merge_samples,
    number_text,
    pick_reasoning,
    reply_number,
)
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from scoregate.store.records import DataType, Score

NOT_PROVIDED = "(not provided)"
SAMPLING_TEMPERATURE = 0.7
DEFAULT_REASONING = "In one or two sentences, justify the score with specific evidence."

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


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
        return self.combine(await self.sample(ctx))

    async def sample(self, ctx: EvalContext) -> list[Parsed]:
        """Return each of the `samples` replies for one item, parsed (a failed call: every key null, with why)."""
        request = self.request(ctx)
        # Each sample gets its own `extra` marker so the response cache keeps k distinct answers.
        requests = (
            [request]
            if self.spec.samples == 1
            else [dataclasses.replace(request, extra={**request.extra, "sample": i}) for i in range(self.spec.samples)]
        )
        return list(await asyncio.gather(*(self._ask(ctx, r) for r in requests)))

    def parse(self, completion: Completion) -> Parsed:
        """Read one reply into key → (value, reason); never raises."""
        keys = [REASONING_FIELD, *(f.key for f in self._fields)]
        text = completion.text or ""
        cut = " (the reply was cut off at max_tokens)" if completion.finish_reason == "length" else ""
        reply = find_object(text)
        if isinstance(reply, dict):
            parsed: Parsed = {REASONING_FIELD: check_reasoning(reply)}
            for f in self._fields:
                parsed[f.key] = check_field(f, field_in_reply(reply, f.key))
            return parsed
        if BARE_NUMBER.match(text):
            parsed = {k: (None, f"judge replied only a number ({text.strip()}), no {k!r}") for k in keys}
            parsed[self.spec.score.key] = check_field(self.spec.score, (True, reply_number(text)))
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

    def combine(self, samples: list[Parsed]) -> list[Score]:
        """Merge the samples into one score per key; the reasoning goes in the primary score's comment."""
        primary = self.spec.score.key
        merged = {f.key: merge_samples(f, [s[f.key] for s in samples]) for f in self._fields}
        reasoning, reasoning_why = pick_reasoning(samples, primary, merged[primary][0])
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


class CascadeJudge:
    """Scores with the first judge when its confidence reaches the threshold, else with the strong judge."""

    def __init__(self, spec: LlmJudgeSpec, default_model: str | None) -> None:
        assert spec.cascade is not None
        self.name = spec.name
        self.version = spec.version
        self.spec = spec
        self.cascade = spec.cascade
        self.strong = LlmJudge(spec.model_copy(update={"cascade": None}), default_model)
        self.model = self.strong.model
        if self.cascade.first_model == self.model:
            raise ScoregateError(
                f"cascade.first_model: {self.model!r} is the run's judge model: a judge cannot be its own cascade",
                where=f"evaluator {spec.name}",
                hint="name a cheaper model in cascade.first_model, or give the judge its own `model:`",
            )
        first = spec.model_copy(
            update={"cascade": None, "model": self.cascade.first_model, "samples": self.cascade.samples}
        )
        self.first = LlmJudge(first, default_model)
        self.first_key, self.confidence_key = spec.cascade_keys()

    def score_keys(self) -> list[tuple[str, DataType]]:
        """The strong judge's keys, then the first judge's answer and confidence."""
        return [
            *self.strong.score_keys(),
            (self.first_key, self.spec.score.data_type),
            (self.confidence_key, "numeric"),
        ]

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return the first judge's scores when it is sure enough, else the strong judge's; plus the first's answer."""
        key = self.spec.score.key
        samples = await self.first.sample(ctx)
        first_scores = self.first.combine(samples)
        answer = first_scores[0]
        confidence = sample_confidence([s[key][0] for s in samples], answer.value)
        extras = [
            Score(self.first_key, answer.value, self.spec.score.data_type, self.name, reason=answer.reason),
            Score(self.confidence_key, confidence, "numeric", self.name),
        ]
        threshold = self.cascade.threshold
        model = self.cascade.first_model
        if threshold is not None and answer.value is not None and confidence >= threshold:
            _note(first_scores[0], f"[kept by the first judge {model}: confidence {confidence:g} >= {threshold:g}]")
            return first_scores + extras
        scores = await self.strong.evaluate(ctx)
        if threshold is None:
            why = "[no cascade threshold for this judge version: the strong judge scores every item]"
        elif answer.value is None:
            why = f"[escalated: the first judge {model} gave no answer: {answer.reason}]"
        else:
            why = f"[escalated: the first judge {model} was unsure, confidence {confidence:g} < {threshold:g}]"
        _note(scores[0], why)
        return scores + extras


def _note(score: Score, line: str) -> None:
    """Put the cascade's decision first in the primary score's comment."""
    score.comment = f"{line}\n{score.comment}" if score.comment else line


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
    kind = "integer" if integral_range(f) else "number"
    return f"{kind} from {number_text(f.range[0])} to {number_text(f.range[1])}"


def _render_value(value: Any) -> str:
    """A variable's text in the prompt; None or blank renders as NOT_PROVIDED."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NOT_PROVIDED
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return str(value)
