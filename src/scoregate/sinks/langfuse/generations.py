"""One Langfuse generation per stored model call, placed at the call's recorded start and end."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scoregate.integrations.langfuse.delivery import MirrorClient
from scoregate.sinks.langfuse.context import MirrorContext
from scoregate.sinks.langfuse.trace_attributes import describe_current_span, experiment_description
from scoregate.store.records import ItemResult

if TYPE_CHECKING:
    from langfuse import Langfuse


def _nanos(moment: str | None) -> int | None:
    if not moment:
        return None
    parsed = datetime.fromisoformat(moment)
    return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp() * 1e9)


def record_generations(
    lf: Langfuse, session: MirrorClient, ctx: MirrorContext, result: ItemResult, trace_id: str
) -> None:
    """Record one generation per stored model call, at the call's recorded start and end (not the mirror's time);
    each carries the experiment's description, as the task span it is recorded under."""
    prompt_name = result.prompt.rsplit("@", 1)[0]
    description = experiment_description()
    info = ctx.manifest.receipts.prompts.get(prompt_name)
    cursor = int(ctx.timestamp.timestamp() * 1e9)  # calls stored before start times were recorded: from run start
    window: list[int] = []
    for call in result.calls:
        is_task = call.purpose == "task"
        settings: dict[str, Any] = {"temperature": info.temperature, "max_tokens": info.max_tokens} if info else {}
        params = {k: v for k, v in settings.items() if is_task and v is not None}
        usage = {k: v for k, v in (("input", call.tokens_in), ("output", call.tokens_out)) if v is not None}
        with lf.start_as_current_observation(
            name=call.purpose,
            as_type="generation",
            model=call.model,
            model_parameters=params or None,
            usage_details=usage or None,
            cost_details={"total": call.cost_usd} if call.cost_usd is not None else None,
            prompt=ctx.prompts.get(prompt_name) if is_task else None,
            input=result.input if is_task else None,
            output=(result.raw_output if result.raw_output is not None else result.output) if is_task else None,
            metadata={
                "endpoint": call.endpoint,
                "latency_ms": call.latency_ms,
                "retries": call.retries,
                "cached": call.cached,
            },
            level="ERROR" if call.error else None,
            status_message=call.error,
            end_on_exit=False,  # ended below, once retimed
        ) as generation:
            describe_current_span(description)
        latency = int((call.latency_ms or 0) * 1_000_000)
        end = _nanos(call.ended_at) or (_nanos(call.started_at) or cursor) + latency
        start = end - latency if call.latency_ms is not None else (_nanos(call.started_at) or end)
        cursor = end  # the span lasts the measured latency and ends when the answer came
        window += [start, end]
        session.retimer.span(int(generation.id, 16), start, end)
        generation.end()
    if trace_id:
        start_ns = min(window) if window else int(ctx.timestamp.timestamp() * 1e9)
        session.retimer.trace(int(trace_id, 16), start_ns, max(window) if window else start_ns)
