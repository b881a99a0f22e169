"""One item through the pipeline: choose and render the prompt, call the model, score, compose."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoregate.calls.caller import ModelCaller
from scoregate.calls.errors import ModelCallFailed
from scoregate.catalog.config_models import CompositeSpec
from scoregate.catalog.models import DatasetItem, PromptSpec, ResponseFormat
from scoregate.catalog.routing import choose_prompt, inferred_fields
from scoregate.catalog.templates import instruction_lines, render_messages
from scoregate.errors import ScoregateError
from scoregate.providers.base import CompletionRequest
from scoregate.scoring.base import EvalContext, Evaluator
from scoregate.store.records import CallRecord, ItemResult, Score


def task_request(prompt: PromptSpec, item: DatasetItem) -> CompletionRequest:
    """Return the model request for one item under one prompt (a forecast asks the cache for it too)."""
    config = prompt.config
    schema = config.response_format
    return CompletionRequest(
        messages=render_messages(prompt, item.input),
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        top_p=config.top_p,
        json_schema=_reply_schema(schema, item) if schema else None,
        schema_name=schema.name if schema else "output",
        schema_strict=schema.strict if schema else True,
    )


@dataclass(frozen=True)
class ItemPipeline:
    """What every item of a run shares: route, prompts, model, evaluators, composites."""

    route: Any
    prompts: dict[str, PromptSpec]
    prompt_versions: dict[str, str]
    model_name: str
    caller: ModelCaller
    evaluators: Sequence[Evaluator]
    composites: dict[str, CompositeSpec]
    output_from: str = "model"

    def request_for(self, prompt: PromptSpec, item: DatasetItem) -> CompletionRequest:
        """Return the model request for one item under one prompt."""
        return task_request(prompt, item)

    async def run(self, index: int, item: DatasetItem) -> ItemResult:
        """Produce, score and return one item's result; failures become data, never exceptions."""
        assert item.id is not None
        prompt_name = choose_prompt(self.route, item.input)
        prompt = self.prompts[prompt_name]
        inferred = inferred_fields(self.route, item.input)
        calls: list[CallRecord] = []
        result = ItemResult(
            index=index,
            item_id=item.id,
            prompt=f"{prompt_name}@{self.prompt_versions[prompt_name]}",
            input=item.input,
            output=None,
            expected_output=item.expected_output,
            metadata={**item.metadata, "inferred_input": inferred} if inferred else item.metadata,
            calls=calls,
        )
        if self.output_from == "expected_output":
            result.prompt = "expected_output"
            result.output = item.expected_output
            if item.expected_output is None:
                result.error = "the item has no expected_output to score (experiment output_from: expected_output)"
            result.scores = await self._score(result, item, calls)
            result.scores += compose(result.scores, self.composites)
            return result
        try:
            completion = await self.caller.call(self.model_name, self.request_for(prompt, item), "task", calls)
        except ModelCallFailed as exc:
            result.error = f"model call failed: {exc}"
        else:
            result.output, result.error = _parse_output(completion.text, prompt)
            if result.error:
                result.raw_output = completion.text
        scored = item.model_copy(update={"input": {**item.input, **inferred}}) if inferred else item
        result.scores = await self._score(result, scored, calls)
        result.scores += compose(result.scores, self.composites)
        return result

    async def _score(self, result: ItemResult, item: DatasetItem, calls: list[CallRecord]) -> list[Score]:
        """Run the item's evaluators side by side; scores and call records come back in evaluator order.

        Concurrency is bounded where the calls are made: each model's `max_connections` (ModelCaller).
        """
        if len(self.evaluators) == 1:  # one evaluator: no tasks to make
            only, own_calls = await self._evaluate(self.evaluators[0], result, item)
            calls += own_calls
            return only
        outcomes = await asyncio.gather(*(self._evaluate(e, result, item) for e in self.evaluators))
        scores: list[Score] = []
        for evaluator_scores, evaluator_calls in outcomes:
            scores += evaluator_scores
            calls += evaluator_calls
        return scores

    def _instructions(self, result: ItemResult, item: DatasetItem) -> tuple[str, ...]:
        """The instruction lines of the prompt the item was sent with (none when its output was not asked for)."""
        prompt = self.prompts.get(result.prompt.rpartition("@")[0])
        return instruction_lines(prompt, item.input) if prompt is not None else ()

    async def _evaluate(
        self, evaluator: Evaluator, result: ItemResult, item: DatasetItem
    ) -> tuple[list[Score], list[CallRecord]]:
        """Return one evaluator's scores and its model calls; a failure becomes nulls with the reason."""
        calls: list[CallRecord] = []

        async def call_model(name: str | None, request: CompletionRequest, purpose: str) -> Any:
            return await self.caller.call(name, request, purpose, calls)

        # An evaluator that scores unparsable replies (extraction: invalid JSON scores 0) gets the raw text.
        unparsed = result.raw_output if getattr(evaluator, "scores_unparsed_output", False) else None
        if result.error is not None and unparsed is None:
            reason = "no output to score: " + result.error
            return [Score.missing(k, t, evaluator.name, reason) for k, t in evaluator.score_keys()], calls
        context = EvalContext(
            item_id=result.item_id,
            input=item.input,
            output=result.output if unparsed is None else unparsed,
            expected_output=item.expected_output,
            metadata=item.metadata,
            call_model=call_model,
            instructions=self._instructions(result, item),
        )
        try:
            return await evaluator.evaluate(context), calls
        except Exception as exc:  # an evaluator bug must not lose the item
            reason = f"evaluator {evaluator.name} failed: {type(exc).__name__}: {exc}"
            return [Score.missing(k, t, evaluator.name, reason) for k, t in evaluator.score_keys()], calls


def _reply_schema(response_format: ResponseFormat, item: DatasetItem) -> dict[str, Any]:
    """Return the prompt's schema, or the item's own one when the prompt names it with `schema_from`."""
    if response_format.schema_from is None:
        return response_format.schema_ or {}
    field = response_format.schema_from.removeprefix("input.")
    schema = item.input.get(field)
    if not isinstance(schema, dict):
        raise ScoregateError(
            f"item {item.id!r} has no JSON Schema object at {response_format.schema_from}",
            hint=f"give every item an object `{field}` in its input, or declare it in the dataset's input_schema",
        )
    return schema


def _parse_output(text: str, prompt: PromptSpec) -> tuple[Any, str | None]:
    if prompt.config.response_format is None:
        return text, None
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        snippet = text[:120].replace("\n", " ")
        return None, f"the model's reply is not the JSON the prompt requires ({exc.msg}): {snippet!r}"


def _numeric(score: Score | None) -> float | None:
    if score is None or score.value is None or isinstance(score.value, str):
        return None
    return float(score.value)


def compose(scores: list[Score], composites: dict[str, CompositeSpec]) -> list[Score]:
    """Return each composite as a weighted sum of this item's scores; null naming the missing parts."""
    by_name = {s.name: s for s in scores}
    out = []
    for name, spec in composites.items():
        parts = {key: _numeric(by_name.get(key)) for key in spec.weights}
        missing = sorted(k for k, v in parts.items() if v is None)
        if missing:
            out.append(Score.missing(name, "numeric", f"composite:{name}", f"missing parts: {', '.join(missing)}"))
        else:
            value = sum(spec.weights[k] * v for k, v in parts.items() if v is not None)
            out.append(Score(name=name, value=round(value, 6), data_type="numeric", evaluator=f"composite:{name}"))
    return out
