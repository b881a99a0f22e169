"""`scoregate traces score EXPERIMENT`: the experiment's file judges over its production traces, client-side, and
their scores posted onto the traces under the files' score keys.

Each score's id is derived from the trace, the score key and the judge's version, and its time is the trace's:
Langfuse replaces a score with the same id, name and day, so posting again never adds one. What was judged and
what the server confirmed are kept in `.scoregate/production/<experiment>/` (`TracesLedger`): a re-run judges
and posts only what is new, and a run killed at any point resumes without judging a finished trace again.
The forecast and the budget (`--budget-usd`, `--budget-minutes`, `settings.budget`) are checked before the
first model call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.app.traces_judging import TraceToJudge, judge_traces
from scoregate.app.traces_ledger import Judged, TracesLedger, score_id
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.production_checks import production_prompt
from scoregate.catalog.production_paths import read_fields
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.support.redaction import redact, redact_personal_value
from scoregate.tracks.project import load_project

if TYPE_CHECKING:
    from scoregate.app.forecast import RunForecast
    from scoregate.integrations.langfuse.production_fetch import ProductionFetch
    from scoregate.integrations.langfuse.score_sender import ScoreWrite
    from scoregate.scoring.base import Evaluator

LANGFUSE_TYPES = {"numeric": "NUMERIC", "boolean": "BOOLEAN", "categorical": "CATEGORICAL", "text": "TEXT"}
TEXT_LIMIT = 500
MAX_TRACE_CHARS = 100_000
"""The most characters a trace's mapped fields may hold as JSON to be judged: a bigger one is skipped, not cut."""


@dataclass
class TracesScore:
    """What one `traces score` did: the traces it read, judged and skipped, the scores posted, the calls made."""

    experiment: str
    prompt: str = ""
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    found: int = 0
    selected: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    judged_now: int = 0
    judged_before: int = 0
    unmeasured: dict[str, int] = field(default_factory=dict)
    """Null scores by reason."""
    to_post: int = 0
    posted: int = 0
    already_posted: int = 0
    refused: list[str] = field(default_factory=list)
    calls: int = 0
    failed_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    forecast: RunForecast | None = None
    dry_run: bool = False
    ledger: str = ""


def _traces_to_judge(
    project: Project, experiment: str, fetched: ProductionFetch, report: TracesScore
) -> list[TraceToJudge]:
    """Each trace mapped as `production:` says; one without a mapped field is skipped with the reason."""
    spec = project.config.production[experiment]
    paths = spec.mapping.paths()
    traces = []
    for trace in fetched.traces:
        values, missing = read_fields(trace.document, paths)
        if missing:
            report.skipped.append((trace.trace_id, "no " + ", ".join(f"{f} ({paths[f]})" for f in missing)))
            continue
        size = len(json.dumps(values, ensure_ascii=False))
        if size > MAX_TRACE_CHARS:
            report.skipped.append(
                (
                    trace.trace_id,
                    f"{size:,} characters, over the {MAX_TRACE_CHARS:,} characters a judged trace may have",
                )
            )
            continue
        values = redact_personal_value(values, patterns=spec.redact)  # judges, cache and ledger see no personal data
        traces.append(
            TraceToJudge(
                trace_id=trace.trace_id,
                timestamp=trace.timestamp,
                input={k.removeprefix("input."): v for k, v in values.items() if k.startswith("input.")},
                output=values["output"],
                metadata={k.removeprefix("metadata."): v for k, v in values.items() if k.startswith("metadata.")},
            )
        )
    return traces


def _fetch(
    project: Project, experiment: str, window: tuple[dt.datetime, dt.datetime], limit: int | None
) -> ProductionFetch:
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.production_fetch import fetch_production
    from scoregate.integrations.langfuse.remote import Remote

    spec = project.config.production[experiment]
    prompt = production_prompt(project, experiment, spec)
    assert prompt is not None  # validate refuses an entry without one
    return fetch_production(Remote(require_settings()), spec, prompt, window, limit=limit)


def _forecast(project: Project, plan: ExperimentPlan, traces: list[TraceToJudge], judges: set[str]) -> RunForecast:
    """The judges' calls, tokens, cost and time over the traces still to judge (from prompt lengths)."""
    import json

    from scoregate.analysis.forecast import forecast
    from scoregate.app.forecast import CHARS_PER_OUTPUT_TOKEN, RunForecast, _judge_groups

    settings = project.config.settings
    mean_input = sum(len(json.dumps(t.input, ensure_ascii=False)) for t in traces) / max(len(traces), 1)
    mean_output = sum(len(str(t.output)) for t in traces) / max(len(traces), 1)
    evaluators = {name: spec for name, spec in plan.evaluators.items() if name in judges}
    groups = _judge_groups(
        project, plan, evaluators, len(traces), mean_input, int(mean_output / CHARS_PER_OUTPUT_TOKEN)
    )
    concurrency = plan.spec.concurrency or settings.concurrency
    result = forecast(
        groups, concurrency=concurrency, parallelism=None, level=settings.confidence_level,
        resamples=settings.bootstrap_resamples, seed=settings.seed,
    )  # fmt: skip
    return RunForecast(result, len(traces), [], concurrency, experiment=plan.name, model=plan.judge_model_name)


def _writes(judged: list[Judged], report: TracesScore) -> list[ScoreWrite]:
    """The measured scores as Langfuse scores (fixed id and time); the null ones counted by reason."""
    from scoregate.integrations.langfuse.score_sender import ScoreWrite

    writes = []
    for entry in judged:
        moment = dt.datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00"))
        for score in entry.scores:
            if score.value is None:
                reason = score.reason or "not measured"
                report.unmeasured[reason] = report.unmeasured.get(reason, 0) + 1
                continue
            value: float | str = score.value if isinstance(score.value, str) else float(score.value)
            if score.data_type == "boolean":
                value = 1.0 if score.value else 0.0
            elif score.data_type == "text":
                value = (str(value) or "(empty)")[:TEXT_LIMIT]
            writes.append(
                ScoreWrite(
                    id=score_id(entry.trace_id, score.name, entry.judge, entry.version),
                    name=score.name,
                    value=value,
                    timestamp=moment,
                    data_type=LANGFUSE_TYPES[score.data_type],
                    comment=score.comment,
                    metadata={"evaluator": f"{entry.judge}@v{entry.version}", "source": "scoregate traces score"},
                    trace_id=entry.trace_id,
                )
            )
    return writes


def _post(ledger: TracesLedger, writes: list[ScoreWrite], report: TracesScore) -> None:
    """Post the scores Langfuse has not confirmed; record those it confirms."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.score_sender import ScoreSender
    from scoregate.integrations.langfuse.server_generation import read_generation

    confirmed = ledger.posted()
    fresh = [w for w in writes if w.id not in confirmed]
    report.to_post, report.already_posted = len(writes), len(writes) - len(fresh)
    if not fresh:
        return
    settings = require_settings()
    sender = ScoreSender(settings, read_generation(settings))
    try:
        sender.send_all(fresh)
    finally:
        sender.close()
    accepted = [w.id for w in fresh if sender.ledger.is_accepted(w.id)]
    ledger.add_posted(accepted)
    report.posted = len(accepted)
    report.refused = list(sender.ledger.server_errors)


def _judge(
    project: Project,
    plan: ExperimentPlan,
    work: list[tuple[TraceToJudge, Evaluator]],
    ledger: TracesLedger,
    report: TracesScore,
) -> None:
    """Run the judges; each answer goes to the ledger as it comes (a kill loses at most the calls in flight)."""
    from scoregate.calls.cache import ResponseCache
    from scoregate.calls.caller import ModelCaller
    from scoregate.providers.base import ProviderContext

    settings = project.config.settings
    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite")
    caller = ModelCaller(
        project.config.models, default_judge=plan.judge_model_name, cache=cache,
        context=ProviderContext(project.root, settings),
    )  # fmt: skip
    models = sorted({m for _, e in work for m in plan.evaluators[e.name].models_called(plan.judge_model_name)})

    def keep(judged: Judged) -> None:
        scores = [s if s.comment is None else _redacted(s) for s in judged.scores]
        ledger.add_judged(Judged(judged.trace_id, judged.timestamp, judged.judge, judged.version, scores, judged.calls))
        report.judged_now += 1
        for call in judged.calls:
            report.calls += 1
            report.failed_calls += call.error is not None
            report.tokens_in += call.tokens_in or 0
            report.tokens_out += call.tokens_out or 0
            report.cost_usd += call.cost_usd or 0.0

    async def go() -> None:
        try:
            if models:
                await caller.preflight(models)
            await judge_traces(caller, work, concurrency=plan.spec.concurrency or settings.concurrency, on_judged=keep)
        finally:
            await caller.aclose()

    try:
        asyncio.run(go())
    finally:
        cache.close()


def _redacted(score: Any) -> Any:
    from dataclasses import replace

    return replace(score, comment=redact(score.comment))


def score_traces(
    root: Path,
    experiment: str,
    *,
    last: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    judge_model: str | None = None,
    budget_usd: float | None = None,
    budget_minutes: float | None = None,
    dry_run: bool = False,
    now: dt.datetime | None = None,
) -> TracesScore:
    """Judge the experiment's production traces with its file judges and post the scores onto the traces; return
    what was read, judged, skipped and posted. `dry_run`: fetch and forecast only (no model call, nothing posted)."""
    from scoregate.app.run.budget import budget_of, check_forecast
    from scoregate.catalog.production import ProductionWindow

    project = load_project(root)
    spec = project.config.production.get(experiment)
    if spec is None:
        raise ScoregateError(
            f"no `production:` entry for experiment {experiment!r} in scoregate.yaml",
            where=str(project.config_path),
            hint="add one (docs/production/index.md) saying which Langfuse traces are its production traffic",
        )
    plan = plan_experiment(project, experiment, judge_model=judge_model)
    budget = budget_of(project.config.settings, budget_usd, budget_minutes)
    window_spec = spec.filter.window if last is None else ProductionWindow.from_option(last)
    window = window_spec.bounds(now or dt.datetime.now(dt.UTC))
    report = TracesScore(experiment=experiment, start=window[0], end=window[1], dry_run=dry_run)
    fetched = _fetch(project, experiment, window, None if sample else limit)
    report.prompt, report.found = fetched.prompt, len(fetched.traces)
    report.skipped += fetched.skipped
    traces = _traces_to_judge(project, experiment, fetched, report)
    if sample is not None and sample < len(traces):
        traces = random.Random(seed).sample(sorted(traces, key=lambda t: t.trace_id), sample)
    report.selected = len(traces)
    ledger = TracesLedger(project.root, experiment)
    report.ledger = str(ledger.folder.relative_to(project.root))
    evaluators = [project.kinds.build(s, default_judge_model=plan.judge_model_name) for s in plan.evaluators.values()]
    done = ledger.judged()
    work = [(t, e) for t in traces for e in evaluators if (t.trace_id, e.name, e.version) not in done]
    report.judged_before = len(traces) * len(evaluators) - len(work)
    if work:
        pending = list({t.trace_id: t for t, _ in work}.values())
        report.forecast = _forecast(project, plan, pending, {e.name for _, e in work})
        if budget.any:
            check_forecast(report.forecast, budget, experiment)
    if dry_run:
        return report
    if work:
        _judge(project, plan, work, ledger, report)
    done = ledger.judged()
    chosen = [
        done[(t.trace_id, e.name, e.version)]
        for t in traces
        for e in evaluators
        if (t.trace_id, e.name, e.version) in done
    ]
    _post(ledger, _writes(chosen, report), report)
    return report
