"""What a live rule would cost a day, and the budget it is held to before it is enabled.

Calls a day = the matching traffic of the last days (counted by the server with the rule's own filter) × the
rule's sampling, for each judge it runs (the server asks a judge once an observation). Each judge's calls are
forecast by the run forecast's numbers (`analysis.forecast`): from the judge's past calls in this project's runs
(`runs/*/metrics.json`, stage `judge:<file>` on the same model) when there are some, else from its prompt length
and `max_tokens` at the model's price. A day of one rule is held to `settings.budget.usd` (the most one run may
spend); a cost that cannot be known (a model without a price) is not a pass while a budget is set.
"""

from __future__ import annotations

import math
from pathlib import Path

from scoregate.analysis.forecast import CallGroup, Forecast, PastCalls, forecast
from scoregate.app.past_telemetry import read_metrics, telemetry_number
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.evaluators_rules import RulePlan
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.store.telemetry import METRICS_JSON

PAST_RUNS = 20
CHARS_PER_OUTPUT_TOKEN = 4
"""A judge reads the task's output: at most the judge's max_tokens worth, at about this many characters a token."""


def past_judge_calls(runs: Path, judge: str, model: str) -> PastCalls:
    """The per-call values of `judge` on `model` in the newest PAST_RUNS runs that called it (cache hits left out)."""
    past = PastCalls()
    directories = sorted((p for p in runs.iterdir() if p.is_dir()), reverse=True) if runs.is_dir() else []
    used = 0
    for directory in directories:
        data = read_metrics(directory / METRICS_JSON) if (directory / METRICS_JSON).is_file() else None
        rows = [
            r
            for r in (data or {}).get("rows") or []
            if isinstance(r, dict) and r.get("stage") == f"judge:{judge}" and r.get("model_name") == model
        ]
        if not rows:
            continue
        for row in (r for r in rows if not r.get("cache_hit")):
            for name, column in (("tokens_in", "tokens_prompt"), ("tokens_out", "tokens_completion")):
                if (number := telemetry_number(row.get(column))) is not None:
                    getattr(past, name).append(number)
            if (cost := telemetry_number(row.get("cost_usd"))) is not None:
                past.cost_usd.append(cost)
        used += 1
        if used >= PAST_RUNS:
            break
    return past


def _price(project: Project, name: str) -> tuple[float, float] | None:
    from scoregate.providers.base import ProviderContext
    from scoregate.providers.registry import build_provider

    spec = project.config.models[name]
    return build_provider(name, spec, ProviderContext(project.root, project.config.settings)).price()


def rule_forecast(project: Project, plan: RulePlan) -> Forecast:
    """The rule's calls and cost a day, with the interval at the project's confidence level."""
    settings = project.config.settings
    calls = math.ceil((plan.traces_per_day or 0) * plan.sampling)
    groups = []
    for judge in plan.judges:
        spec = as_llm_judge(project.evaluators[judge])
        if spec is None:  # a counters file's code evaluator: no model call, no cost
            continue
        model = spec.model or settings.judge_model or settings.model
        chars = len(spec.prompt) + len(spec.reasoning_prompt) + spec.max_tokens * CHARS_PER_OUTPUT_TOKEN
        past = past_judge_calls(project.root / "runs", judge, model)
        groups.append(
            CallGroup(f"judge:{judge}", model, judge, calls, past, chars, spec.max_tokens, _price(project, model))
        )
    return forecast(groups, concurrency=1, parallelism=None, level=settings.confidence_level, seed=settings.seed)


def _model_judges(project: Project, plan: RulePlan) -> int:
    return sum(1 for judge in plan.judges if as_llm_judge(project.evaluators[judge]) is not None)


def over_budget(project: Project, plan: RulePlan, cost: Forecast) -> str | None:
    """Why enabling the rule now breaks `settings.budget.usd`, in one line; None when it does not (or no budget)."""
    limit = project.config.settings.budget.usd
    if limit is None or not plan.enabled or not plan.writes:
        return None
    traffic = f"{plan.traces_per_day or 0:.1f} matching traces a day × sampling {plan.sampling:g}"
    if cost.cost_usd is None:
        return (
            f"rule {plan.name}: its cost a day is unknown ({traffic}; no price for "
            f"{', '.join(cost.unknown_cost)}), so it cannot be held to the budget of ${limit:g}"
        )
    if cost.cost_usd.high <= limit:
        return None
    return (
        f"rule {plan.name}: forecast ${cost.cost_usd.expected:.4g} a day (up to ${cost.cost_usd.high:.4g}) from "
        f"{traffic} × {_model_judges(project, plan)} judge(s) is over the budget of ${limit:g} (settings.budget.usd)"
    )


def refuse_rules_over_budget(problems: list[str], *, force: bool, reason: str | None) -> None:
    """Refuse rules over the budget, in one line, unless forced with a reason."""
    if force and not (reason or "").strip():
        raise ScoregateError("--force needs --reason TEXT: say why, it is kept in judges.jsonl")
    if problems and not force:
        raise ScoregateError(
            "; ".join(problems) + "; nothing was written: lower `sampling`, narrow the filter, raise the budget, "
            "or pass `--force --reason TEXT`"
        )
