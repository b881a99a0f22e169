"""Forecast a run's bill before its first call: the planned calls from the plan, past per-call values from the
telemetry (`runs/<id>/metrics.json`) of earlier runs of the same experiment and model; the numbers from
`scoregate.analysis.forecast`."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.analysis.forecast import CallGroup, Forecast, PastCalls, forecast, observed_parallelism
from scoregate.app.forecast_cascade import CascadeForecast, cascade_forecasts
from scoregate.app.past_telemetry import call_spans, read_metrics, telemetry_number
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.plan import ExperimentPlan
from scoregate.catalog.project import Project
from scoregate.catalog.routing import RouteError, choose_prompt
from scoregate.catalog.templates import prompt_texts
from scoregate.store.telemetry import METRICS_JSON

PAST_RUNS = 20
"""The newest past runs of the experiment whose calls a forecast reads."""
DEFAULT_MAX_TOKENS = 1024
"""Output tokens a call may write when neither its prompt nor its model sets `max_tokens`."""
CHARS_PER_OUTPUT_TOKEN = 4
"""A judge reads the task's output: at most its max_tokens, at about this many characters a token."""

GroupKey = tuple[str, str, str]
"""(stage, model name, prompt name without its version)."""


@dataclass
class _Past:
    """What the past runs' telemetry says, group by group."""

    values: dict[GroupKey, PastCalls]
    rows: dict[GroupKey, int]
    items: int
    runs: list[str]
    parallelism: float | None


def _prompt_name(prompt: str | None) -> str:
    return (prompt or "").split("@", 1)[0]


def _interrupted_calls(directory: Path, experiment: str, model: str) -> dict[str, Any] | None:
    """The telemetry of an interrupted run of `experiment` on `model`, which wrote no metrics.json (a run writes it
    when it finishes), as `write_telemetry` would write it; None for any other run or a damaged one."""
    from scoregate.errors import ScoregateError
    from scoregate.store.run_store import RunStore
    from scoregate.store.telemetry import telemetry_rows

    if not (directory / "manifest.json").is_file():
        return None
    store = RunStore(directory)
    try:
        manifest = store.manifest_record
        receipts = manifest.receipts
        name = receipts.model.name if receipts.model else None
        if manifest.status != "interrupted" or receipts.experiment != experiment or name != model:
            return None
        return {
            "run_id": store.run_id,
            "experiment": experiment,
            "model": model,
            "status": manifest.status,
            "rows": list(telemetry_rows(store, manifest)),
        }
    except (OSError, ScoregateError):
        return None  # a damaged past run is not evidence; the others still are


def _past_calls(runs_dir: Path, experiment: str, model: str) -> Iterator[dict[str, Any] | None]:
    """Each stored run's telemetry, newest run id first: its metrics.json, else an interrupted run's calls."""
    directories = sorted((p for p in runs_dir.iterdir() if p.is_dir()), reverse=True) if runs_dir.is_dir() else []
    for directory in directories:
        path = directory / METRICS_JSON
        yield read_metrics(path) if path.is_file() else _interrupted_calls(directory, experiment, model)


def read_past(runs_dir: Path, experiment: str, model: str) -> _Past:
    """Read the per-call values of the newest finished or interrupted runs of `experiment` on `model`."""
    values: dict[GroupKey, PastCalls] = defaultdict(PastCalls)
    counts: dict[GroupKey, int] = defaultdict(int)
    items, used, parallel = 0, [], []
    for data in _past_calls(runs_dir, experiment, model):
        if data is None or data.get("experiment") != experiment or data.get("model") != model:
            continue
        if data.get("status") not in ("finished", "interrupted"):
            continue
        rows = [r for r in data["rows"] if isinstance(r, dict) and r.get("item_id") is not None]
        if not rows:
            continue
        used.append(str(data.get("run_id")))
        items += len({(r.get("item_id"), r.get("repeat")) for r in rows})
        fresh = [r for r in rows if not r.get("cache_hit")]
        parallel.append(observed_parallelism(call_spans(fresh)))
        for row in rows:
            key = (str(row.get("stage")), str(row.get("model_name")), _prompt_name(row.get("prompt")))
            counts[key] += 1
            if row.get("cache_hit"):
                continue  # a cached reply costs nothing and takes no time: it says nothing of a new call
            past = values[key]
            for name, column in (("tokens_in", "tokens_prompt"), ("tokens_out", "tokens_completion")):
                if (number := telemetry_number(row.get(column))) is not None:
                    getattr(past, name).append(number)
            for name in ("cost_usd", "duration_ms", "retries"):
                if (number := telemetry_number(row.get(name))) is not None:
                    getattr(past, name).append(number)
        if len(used) >= PAST_RUNS:
            break
    known = sorted(p for p in parallel if p is not None)
    middle = known[len(known) // 2] if known else None
    return _Past(dict(values), dict(counts), items, used, middle)


def planned_items(plan: ExperimentPlan, *, limit: int | None, repeat: int, done: int = 0) -> int:
    """The item runs still to do: the dataset (or `limit`) times the repeats, less those already done."""
    per_repeat = min(plan.dataset_scan.count, limit) if limit else plan.dataset_scan.count
    return max(0, per_repeat * repeat - done)


def _price(project: Project, name: str) -> tuple[float, float] | None:
    from scoregate.providers.base import ProviderContext
    from scoregate.providers.registry import build_provider

    spec = project.config.models[name]
    return build_provider(name, spec, ProviderContext(project.root, project.config.settings)).price()


def _prompt_groups(project: Project, plan: ExperimentPlan, items: int) -> list[CallGroup]:
    """Without past calls: one task call per item and prompt, one call per judge sample, from prompt lengths."""
    chars: dict[str, list[int]] = defaultdict(list)
    input_chars: list[int] = []
    for _line, item in iter_items(plan.dataset.path):
        size = len(json.dumps(item.input, ensure_ascii=False))
        input_chars.append(size)
        try:
            name = choose_prompt(plan.route, item.input)
        except RouteError:
            continue
        chars[name].append(size + sum(len(t) for t in prompt_texts(plan.prompts[name])))
    groups = []
    stage = plan.spec.stages[-1].name if plan.spec.stages else "task"
    task_out = DEFAULT_MAX_TOKENS
    if plan.spec.output_from == "model":
        routed = [((stage, plan.model_name, name), len(sizes)) for name, sizes in chars.items()]
        shares = _scaled(routed, items / max(1, sum(count for _, count in routed)))
        for name, sizes in chars.items():
            prompt = plan.prompts[name]
            task_out = prompt.config.max_tokens or plan.model.max_tokens or DEFAULT_MAX_TOKENS
            calls = shares[(stage, plan.model_name, name)]  # the route's share, in whole calls
            groups.append(
                CallGroup(stage, plan.model_name, name, calls, None, sum(sizes) / len(sizes), task_out,
                          _price(project, plan.model_name))
            )  # fmt: skip
    mean_input = sum(input_chars) / len(input_chars) if input_chars else 0.0
    for stage_spec in plan.spec.stages[:-1]:  # each earlier stage of a pipeline: a call per item, live or fixture
        prompt = plan.prompts[stage_spec.prompt]
        model = stage_spec.model or plan.model_name
        out = prompt.config.max_tokens or project.config.models[model].max_tokens or DEFAULT_MAX_TOKENS
        stage_chars = mean_input + sum(len(t) for t in prompt_texts(prompt))
        groups.append(CallGroup(stage_spec.name, model, stage_spec.prompt, items, None, stage_chars, out,
                                _price(project, model)))  # fmt: skip
        groups += _judge_groups(project, plan, plan.stage_evaluators.get(stage_spec.name, {}), items, mean_input, out)
    return groups + _judge_groups(project, plan, plan.evaluators, items, mean_input, task_out)


def _judge_groups(
    project: Project, plan: ExperimentPlan, evaluators: dict[str, Any], items: int, mean_input: float, read: int
) -> list[CallGroup]:
    """Each model an evaluator calls: a call per item and sample, reading the item and an output of `read` tokens
    (a cascade judge: its first judge's samples on every item, its strong judge on the share not kept)."""
    cascades = cascade_forecasts(project, plan)
    groups = []
    for name, spec in evaluators.items():
        template = len(str(getattr(spec, "prompt", ""))) + len(str(getattr(spec, "reasoning_prompt", "")))
        samples = int(getattr(spec, "samples", 1))
        max_tokens = int(getattr(spec, "max_tokens", None) or DEFAULT_MAX_TOKENS)
        prompt_chars = template + mean_input + read * CHARS_PER_OUTPUT_TOKEN
        cascade = getattr(spec, "cascade", None)
        for model in spec.models_called(plan.judge_model_name):
            calls = items * samples
            if cascade is not None:
                calls = _cascade_calls(cascades[name], model, items)
            groups.append(
                CallGroup(f"judge:{name}", model, name, calls, None, prompt_chars, max_tokens, _price(project, model))
            )
    return groups


def _cascade_calls(cascade: CascadeForecast, model: str, items: int) -> int:
    """A cascade judge's calls to `model` over `items` item runs."""
    counted = cascade.counted(items)
    return counted.first_calls if model == cascade.first_model else counted.strong_calls


def _with_cascades(groups: list[CallGroup], cascades: dict[str, CascadeForecast], items: int) -> list[CallGroup]:
    """Groups read from past runs, a cascade judge's counted from its saved threshold instead of its past calls."""
    from dataclasses import replace

    out = []
    for group in groups:
        cascade = cascades.get(group.stage.removeprefix("judge:")) if group.stage.startswith("judge:") else None
        if cascade is not None and group.model in (cascade.first_model, cascade.strong_model):
            group = replace(group, calls=_cascade_calls(cascade, group.model, items))
        out.append(group)
    return out


@dataclass(frozen=True)
class RunForecast:
    """A forecast and what it read: the past runs (none: from prompt lengths and max_tokens only)."""

    forecast: Forecast
    items: int
    past_runs: list[str]
    concurrency: int
    cached_items: int = 0
    """Item runs whose task reply is in the response cache: their calls are counted, free and instant."""
    cached_calls: int = 0
    wall_basis: str | None = None
    """Where a wall time comes from when not from this experiment's past runs (`rough: ...`); None otherwise."""
    experiment: str = ""
    model: str = ""
    """The run's model (its name in scoregate.yaml)."""
    cascades: list[CascadeForecast] = field(default_factory=list)
    """How each cascade judge's calls were counted (from its saved threshold, or on every item: an upper bound)."""

    @property
    def calls(self) -> int:
        """Every call the run is expected to make, cached ones included."""
        return self.forecast.calls + self.cached_calls

    def to_dict(self) -> dict[str, object]:
        """The forecast as JSON."""
        return {
            "items": self.items,
            "past_runs": self.past_runs,
            "concurrency": self.concurrency,
            **self.forecast.to_dict(),
            "calls": self.calls,
            "new_calls": self.forecast.calls,
            "cached_items": self.cached_items,
            "cached_calls": self.cached_calls,
            "wall_basis": self.wall_basis,
            "cascades": [c.to_dict() for c in self.cascades],
        }


def _scaled(rows: list[tuple[tuple[str, str, str], int]], factor: float) -> dict[tuple[str, str, str], int]:
    """Scale each group's past calls by `factor` in whole calls that add up to the rounded total (largest remainder):
    rounding each group alone would give a 1-item run of a prompt routed half and half no task call at all."""
    exact = {key: count * factor for key, count in rows}
    whole = {key: int(value) for key, value in exact.items()}
    left = round(sum(exact.values())) - sum(whole.values())
    for key in sorted(exact, key=lambda k: exact[k] - whole[k], reverse=True)[: max(left, 0)]:
        whole[key] += 1
    return whole


def forecast_run(
    project: Project, plan: ExperimentPlan, runs_dir: Path, *, items: int, concurrency: int, cached_items: int = 0
) -> RunForecast:
    """Forecast the calls, tokens, cost and wall time of `items` item runs of `plan`, `cached_items` of them
    answered from the response cache (counted as calls, free and instant); no model is called."""
    settings = project.config.settings
    past = read_past(runs_dir, plan.name, plan.model_name)
    cascades = cascade_forecasts(project, plan)
    new = items - cached_items
    cached_calls = 0
    if any(v.tokens_in for v in past.values.values()):  # a past of cache hits only says nothing of new calls
        calls = _scaled(sorted(past.rows.items()), new / past.items)
        groups = [CallGroup(*key, calls[key], past.values.get(key)) for key in calls]
        groups = _with_cascades([_priced_group(project, g) for g in groups], cascades, new)
        cached_calls = sum(_scaled(sorted(past.rows.items()), cached_items / past.items).values())
    else:
        groups = _prompt_groups(project, plan, new)
        cached_calls = (
            sum(round(g.calls * cached_items / new) for g in _prompt_groups(project, plan, new)) if new else 0
        )
    result = forecast(
        groups,
        concurrency=concurrency,
        parallelism=past.parallelism,
        level=settings.confidence_level,
        resamples=settings.bootstrap_resamples,
        seed=settings.seed,
    )
    from scoregate.app.forecast_rough import rough_wall

    result, wall_basis = rough_wall(runs_dir, plan.name, groups, result, settings)
    counted = [c.counted(new) for c in cascades.values()]
    return RunForecast(
        result, items, past.runs, concurrency, cached_items, cached_calls, wall_basis, plan.name, plan.model_name,
        counted,
    )  # fmt: skip


def cached_items(
    project: Project, plan: ExperimentPlan, *, limit: int | None, done: set[str], only: set[str] | None = None
) -> int:
    """How many of the items still to do have their task reply in the response cache (repeat 1; none for a
    pipeline of stages or a run scored on expected_output, whose first call this does not rebuild)."""
    path = project.root / ".scoregate" / "cache.sqlite"
    if plan.spec.stages or plan.spec.output_from != "model" or not path.is_file():
        return 0
    from itertools import islice

    from scoregate.calls.cache import ResponseCache, cache_key
    from scoregate.engine.item import task_request
    from scoregate.providers.base import ProviderContext
    from scoregate.providers.registry import build_provider

    provider = build_provider(plan.model_name, plan.model, ProviderContext(project.root, project.config.settings))
    cache = ResponseCache(path)
    try:
        count = 0
        for _line, item in islice(iter_items(plan.dataset.path), limit):
            if item.id in done or (only is not None and item.id not in only):
                continue
            try:
                prompt = plan.prompts[choose_prompt(plan.route, item.input)]
            except RouteError:
                continue
            count += cache.get(cache_key(provider.model, provider.endpoint, task_request(prompt, item))) is not None
        return count
    finally:
        cache.close()


def _priced_group(project: Project, group: CallGroup) -> CallGroup:
    """A group read from the past gets its model's price, for calls whose cost the past did not record."""
    if group.model not in project.config.models:
        return group
    from dataclasses import replace

    return replace(group, price=_price(project, group.model))
