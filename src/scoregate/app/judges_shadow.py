"""`scoregate judges shadow NAME`: score the judge file as it is now (green) on the last traces the live evaluator
(blue) scored, and on its calibration set, before any rule points at green.

Client-side, through scoregate's own judge runner with the judge's model (the response cache off), rather than a
shadow rule with a second score name: nothing is written to Langfuse (a shadow rule would put a second, look-alike
score on production traces and into every dashboard that lists scores), the prompt is the file's, and the same
run gives the canary's figures. Agreement with blue is the canary's statistic (its `metric:`, spearman without a
pin) over the traces both scored; the calibration is the judge canary (`canaries:` in scoregate.yaml): it re-scores
the pinned set with the file as it is now and compares with the stored calibration (statistic, change, CI), and
keeps the result beside the calibration, where `judges promote` reads it.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scoregate.analysis.judge_drift import agreement
from scoregate.app.run.judge_canary import CanaryResult, run_canaries
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec, as_llm_judge

DEFAULT_LAST = 50


@dataclass
class ShadowReport:
    """Green beside blue: their scores on the same live traces, their agreement, and the calibration canary."""

    judge: str
    score_key: str
    blue: list[str]
    green: str | None
    metric: str
    pairs: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(trace id, blue's value, green's value or None) for each trace blue scored."""
    agreement: float | None = None
    exact: float | None = None
    """The share of traces where green gave blue's value."""
    null_reasons: dict[str, int] = field(default_factory=dict)
    canary: CanaryResult | None = None
    canary_note: str | None = None

    @property
    def measured(self) -> int:
        """Traces both judges scored."""
        return sum(1 for _, b, g in self.pairs if b is not None and g is not None)


def _scale(spec: LlmJudgeSpec) -> tuple[int, int] | None:
    """The primary score's integer scale (what the scaled statistics need), or None."""
    if spec.score.data_type == "boolean":
        return (0, 1)
    low, high = spec.score.range or (0.5, 0.5)
    return (int(low), int(high)) if float(low).is_integer() and float(high).is_integer() else None


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, bool | int | float) else value


def score_green_on(project: Project, spec: LlmJudgeSpec, traces: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The judge file's primary score on each trace (value, or None with its reason), through the judge runner."""
    from scoregate.calls.caller import ModelCaller
    from scoregate.providers.base import ProviderContext
    from scoregate.scoring.base import EvalContext
    from scoregate.scoring.judge import LlmJudge
    from scoregate.support.redaction import redact_personal_value

    settings = project.config.settings
    judge = LlmJudge(spec, default_model=settings.judge_model or settings.model)
    context = ProviderContext(project.root, settings)
    caller = ModelCaller(project.config.models, default_judge=str(judge.model), cache=None, context=context)

    async def go() -> list[Any]:
        records: list[Any] = []
        gate = asyncio.Semaphore(settings.concurrency)

        async def call(name: str | None, request: Any, purpose: str) -> Any:
            return await caller.call(name, request, purpose, records)

        async def one(trace_id: str, seen: dict[str, Any]) -> Any:
            seen = redact_personal_value(seen)  # as `traces score`: no model sees a trace's personal data
            given = seen["input"] if isinstance(seen["input"], dict) else {"input": seen["input"]}
            ctx = EvalContext(trace_id, given, seen["output"], None, seen["metadata"], call)
            async with gate:
                scores = await judge.evaluate(ctx)
            primary = next(s for s in scores if s.name == spec.score.key)
            return primary.value if primary.value is not None else (None, primary.reason)

        try:
            await caller.preflight([str(judge.model)])
            return list(await asyncio.gather(*(one(t, seen) for t, seen in traces)))
        finally:
            await caller.aclose()

    return asyncio.run(go())


def shadow_judge(root: Path, name: str, *, last: int = DEFAULT_LAST) -> ShadowReport:
    """Score the judge file (green) on the last `last` traces its live evaluator (blue) scored and on its pinned
    calibration set; write nothing to Langfuse."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.evaluators_api import EvaluatorsApi
    from scoregate.integrations.langfuse.evaluators_body import JudgeBody
    from scoregate.integrations.langfuse.evaluators_live import blue_scores, live_judge, trace_io
    from scoregate.integrations.langfuse.evaluators_sync import select_evaluators, wanted_body
    from scoregate.tracks.project import load_project

    project = load_project(root)
    (spec,) = select_evaluators(project, [name])
    body, judge_spec = wanted_body(project, spec), as_llm_judge(spec)
    if not isinstance(body, JudgeBody):
        raise ScoregateError(f"{name} does not run in Langfuse: {body}")
    if judge_spec is None:
        raise ScoregateError(
            f"{name} is a counters file: its code evaluator is deterministic, so there is no judge to shadow; "
            f"compare its counters with `scoregate run`, then `scoregate judges promote {name} --force --reason TEXT`"
        )
    pin = project.config.canaries.get(name)
    api = EvaluatorsApi(require_settings())
    try:
        live = live_judge(api, body)
        if not live.blue:
            raise ScoregateError(f"no rule runs {name} in Langfuse, so there is no live (blue) evaluator to shadow")
        scores = blue_scores(api, live, last)
        ids = [s["subject"].get("traceId") or s["subject"]["id"] for s in scores]
        traces = [(trace_id, trace_io(api, trace_id)) for trace_id in ids]
    finally:
        api.close()
    report = ShadowReport(name, live.score, live.blue, live.green, pin.metric if pin else "spearman")
    for (trace_id, _), score, green in zip(traces, scores, score_green_on(project, judge_spec, traces), strict=True):
        if isinstance(green, tuple):
            report.null_reasons[green[1] or "no reason"] = report.null_reasons.get(green[1] or "no reason", 0) + 1
            green = None
        report.pairs.append((trace_id, _number(score["value"]), _number(green)))
    both = [(b, g) for _, b, g in report.pairs if b is not None and g is not None]
    if both:
        report.exact = sum(b == g for b, g in both) / len(both)
        if judge_spec.score.data_type != "categorical":
            greens, blues = np.array([g for _, g in both]), np.array([b for b, _ in both])
            value = agreement(greens, blues, report.metric, _scale(judge_spec))
            report.agreement = None if math.isnan(value) else value
    if pin is None:
        report.canary_note = f"{name} has no calibration set pinned under `canaries:` in scoregate.yaml"
    else:
        (report.canary,) = run_canaries(root, [name])
    return report
