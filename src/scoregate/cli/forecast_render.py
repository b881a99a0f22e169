"""Print a run's forecast (`scoregate run EXPERIMENT --dry-run`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoregate.cli.layout import keep, print_wrapped

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.forecast import RunForecast


def _tokens(value: float) -> str:
    return f"{round(value):,}"


def _usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _figure(name: str, figure: dict[str, float] | None, show: object, unknown: str) -> str:
    if figure is None:
        return f"  {name}: {unknown}"
    fmt = show if callable(show) else str
    return f"  {name}: {fmt(figure['expected'])} " + keep(f"({fmt(figure['low'])} to {fmt(figure['high'])})")


def print_forecast(console: Console, planned: RunForecast) -> None:
    """Print the forecast: the figures with their interval, what they rest on, then group by group."""
    data = planned.to_dict()
    level = f"{float(data['level']):.0%}"  # type: ignore[arg-type]
    runs = planned.past_runs
    if runs:
        basis = f"from the calls of {len(runs)} past run(s) (newest {runs[0]})"
    else:
        basis = "from the prompt lengths and max_tokens only: no past run of this experiment on this model"
    print_wrapped(
        console,
        f"forecast: {planned.items} item run(s), {data['calls']} model {'call' if data['calls'] == 1 else 'calls'} "
        f"at concurrency {planned.concurrency}"
        + (f" ({planned.cached_calls} answered from the response cache: free, instant)" if planned.cached_calls else "")
        + f", {basis}; each figure: expected (low to high, {level} interval); no model was called",
    )
    if planned.forecast.calls == 0 and planned.cached_calls:
        print_wrapped(
            console,
            f"no model call is needed: the response cache answers all {planned.items} item run(s) "
            "(free, instant; `--no-cache` forecasts them as new calls)",
        )
        return
    unknown_cost = "unknown: no price for " + ", ".join(planned.forecast.unknown_cost)
    unknown_wall = (
        f"unknown without past runs: no call of {planned.model} measured yet; "
        f"`scoregate run {planned.experiment} --limit 1` measures it"
    )
    print_wrapped(console, _figure("input tokens", data["tokens_in"], _tokens, ""))  # type: ignore[arg-type]
    print_wrapped(console, _figure("output tokens", data["tokens_out"], _tokens, ""))  # type: ignore[arg-type]
    print_wrapped(console, _figure("cost", data["cost_usd"], _usd, unknown_cost))  # type: ignore[arg-type]
    from scoregate.support.figures import duration_text

    wall = _figure("wall time", data["wall_s"], duration_text, unknown_wall)  # type: ignore[arg-type]
    if planned.forecast.parallelism and data["wall_s"] is not None:
        in_flight = f"{planned.forecast.parallelism:.1f} calls in flight on average"  # an item makes several calls
        wall += f" with {in_flight} (calls waiting for a connection included)"
    if planned.wall_basis and data["wall_s"] is not None:
        wall += f" — {planned.wall_basis}"
    print_wrapped(console, wall)
    if data["retries"] is not None:
        print_wrapped(console, _figure("retries", data["retries"], lambda v: f"{v:.1f}", ""))  # type: ignore[arg-type]
    for cascade in planned.cascades:
        print_wrapped(
            console,
            f"cascade {cascade.evaluator}: {cascade.basis}; {cascade.first_calls} first-judge and "
            f"{cascade.strong_calls} strong-judge calls",
            first="  ",
            indent="    ",
        )
    print_wrapped(console, "by stage, model and prompt:")
    for group in planned.forecast.groups:
        past = f"{group.past_calls} past calls" if group.past_calls else "prompt length and max_tokens"
        print_wrapped(
            console,
            f"{keep(group.stage)} · {keep(group.model)} · {keep(group.prompt or '-')}: {group.calls} "
            f"{'call' if group.calls == 1 else 'calls'}, "
            f"{_tokens(group.tokens_in.expected)} tokens in, {_tokens(group.tokens_out.expected)} out ({past})",
            first="  ",
            indent="    ",
        )
