"""Before a run's first request: its forecast (`run --dry-run`) and the budget check that may refuse it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scoregate.app.run.budget import budget_of, check_forecast
from scoregate.app.run.run_options import RunOptions, runs_dir
from scoregate.catalog.plan import ExperimentPlan, plan_experiment
from scoregate.catalog.project import Project
from scoregate.store.run_store import RunStore
from scoregate.support.terminal_text import print_wrapped
from scoregate.tracks.project import load_project

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.forecast import RunForecast
    from scoregate.store.records import CallRecord


def _done_ids(resumed: RunStore | None, options: RunOptions) -> set[str]:
    """Ids a resumed run holds in repeat 1 (whose items the response cache may answer)."""
    return set() if resumed is None else resumed.done_ids(retry_errors=options.resume.retry_errors)


def _done(resumed: RunStore | None, options: RunOptions) -> int:
    """Item runs a resumed run already holds (with --retry-errors its failed ones are to do again)."""
    if resumed is None:
        return 0
    from scoregate.store.repeats import done_by_repeat

    if options.selection.repeat > 1:
        return sum(len(ids) for ids in done_by_repeat(resumed, retry_errors=options.resume.retry_errors).values())
    return len(resumed.done_ids(retry_errors=options.resume.retry_errors))


def forecast_plan(
    project: Project, plan: ExperimentPlan, options: RunOptions, resumed: RunStore | None = None
) -> RunForecast:
    """Forecast the run `options` ask for (the items still to do of a resumed one); no model is called."""
    from scoregate.app.forecast import cached_items, forecast_run, planned_items  # numpy: only with a budget

    concurrency = options.concurrency or plan.spec.concurrency or project.config.settings.concurrency
    items = planned_items(
        plan, limit=options.selection.limit, repeat=options.selection.repeat, done=_done(resumed, options)
    )
    members = None
    if options.sharding.shard is not None:  # a shard runs its own items only
        from scoregate.app.run.shards import shard_members

        members = shard_members(plan.dataset.path, options.selection.limit, options.sharding.shard)
        items = max(0, len(members) * options.selection.repeat - _done(resumed, options))
    cached = 0
    if options.use_cache:
        done = _done_ids(resumed, options)
        cached = cached_items(project, plan, limit=options.selection.limit, done=done, only=members)
    return forecast_run(project, plan, runs_dir(project), items=items, concurrency=concurrency, cached_items=cached)


def forecast_experiment(root: Path, experiment: str, options: RunOptions) -> RunForecast:
    """`scoregate run EXPERIMENT --dry-run`: check the files and forecast the run's bill; no model is called."""
    project = load_project(root)
    budget_of(project.config.settings, options.budget.usd, options.budget.minutes)  # a bad budget is refused here too
    plan = plan_experiment(
        project,
        experiment,
        model=options.models.model,
        judge_model=options.models.judge_model,
        model_from=options.models.model_from,
    )
    return forecast_plan(project, plan, options)


def refuse_over_budget(
    project: Project, plan: ExperimentPlan, options: RunOptions, resumed: RunStore | None, console: Console | None
) -> RunForecast | None:
    """With a budget (options or scoregate.yaml), raise BudgetRefused when the forecast's upper end exceeds it;
    return the forecast when its time budget could not be checked (no wall time: see `refuse_below_check_floor`).
    Its notes go to `console`, else to standard error."""
    budget = budget_of(project.config.settings, options.budget.usd, options.budget.minutes)
    if not budget.any:
        return None
    planned = forecast_plan(project, plan, options, resumed)
    for note in check_forecast(planned, budget, plan.name):
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        print_wrapped(console, note, style="yellow")
    return planned if budget.minutes is not None and planned.forecast.wall_s is None else None


def refuse_below_check_floor(
    project: Project, planned: RunForecast, options: RunOptions, checks: list[CallRecord], console: Console
) -> None:
    """A time budget the forecast could not check: the models' one-token check just measured how long the least
    reply takes. Say the wall time that sets (rough: each call about that long or longer), and raise BudgetRefused
    when even that exceeds the budget."""
    from scoregate.app.forecast_rough import check_floor_s
    from scoregate.app.run.budget import BudgetRefused, duration_and_minutes
    from scoregate.support.figures import duration_text

    minutes = budget_of(project.config.settings, options.budget.usd, options.budget.minutes).minutes
    calls: dict[str, int] = {}
    for group in planned.forecast.groups:
        calls[group.model] = calls.get(group.model, 0) + group.calls
    check_ms = {r.model_name: r.duration_ms for r in checks if r.model_name and r.duration_ms and r.error is None}
    floor = check_floor_s(calls, check_ms, planned.concurrency)
    if minutes is None or not floor:  # no check to go on, or every planned call answered from the cache
        return
    slowest = duration_text(max(check_ms[m] for m in calls) / 1000)
    said = (
        f"wall time {duration_text(floor)} or more (rough: {sum(calls.values())} calls, each about as long as the "
        f"model check's one-token reply ({slowest}) or longer, {planned.concurrency} in parallel)"
    )
    if floor > minutes * 60:
        raise BudgetRefused(
            f"not started: {said} > budget {duration_and_minutes(minutes)}",
            hint=f"raise the budget (--budget-minutes or settings.budget.minutes), or run fewer items (--limit); "
            f"the forecast of a later run reads this experiment's past runs: `scoregate run {planned.experiment} "
            "--dry-run`",
        )
    print_wrapped(console, said, style="yellow")
