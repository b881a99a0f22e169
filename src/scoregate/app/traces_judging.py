"""The file judges run client-side over production traces: each trace's logged output scored by each evaluator of
the experiment, its model calls through the project's `ModelCaller` (limits, retries, cache, telemetry).

A production trace has no reference, so an evaluator sees `expected_output` as null (a judge that needs one
scores null with its reason). A failing evaluator gives nulls with the reason, never an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scoregate.app.traces_ledger import Judged
from scoregate.calls.caller import ModelCaller
from scoregate.providers.base import CompletionRequest
from scoregate.scoring.base import EvalContext, Evaluator
from scoregate.store.records import CallRecord, Score


@dataclass(frozen=True)
class TraceToJudge:
    """One production trace as the judges read it: the mapped input and the logged output."""

    trace_id: str
    timestamp: str
    input: dict[str, Any]
    output: Any
    metadata: dict[str, Any]


async def _judge_one(caller: ModelCaller, evaluator: Evaluator, trace: TraceToJudge) -> Judged:
    calls: list[CallRecord] = []

    async def call_model(name: str | None, request: CompletionRequest, purpose: str) -> Any:
        return await caller.call(name, request, purpose, calls)

    context = EvalContext(
        item_id=trace.trace_id,
        input=trace.input,
        output=trace.output,
        expected_output=None,
        metadata=trace.metadata,
        call_model=call_model,
    )
    try:
        scores = await evaluator.evaluate(context)
    except Exception as exc:  # an evaluator bug must not lose the trace
        reason = f"evaluator {evaluator.name} failed: {type(exc).__name__}: {exc}"
        scores = [Score.missing(k, t, evaluator.name, reason) for k, t in evaluator.score_keys()]
    return Judged(trace.trace_id, trace.timestamp, evaluator.name, evaluator.version, scores, calls)


async def judge_traces(
    caller: ModelCaller,
    work: Sequence[tuple[TraceToJudge, Evaluator]],
    *,
    concurrency: int,
    on_judged: Callable[[Judged], None],
) -> None:
    """Judge every (trace, evaluator) pair, `concurrency` at a time; hand each result to `on_judged` as it comes."""
    limit = asyncio.Semaphore(concurrency)

    async def one(trace: TraceToJudge, evaluator: Evaluator) -> None:
        async with limit:
            judged = await _judge_one(caller, evaluator, trace)
        on_judged(judged)

    await asyncio.gather(*(one(trace, evaluator) for trace, evaluator in work))
