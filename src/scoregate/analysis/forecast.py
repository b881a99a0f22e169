"""Forecast a run's bill (calls, tokens, cost, wall time) with an interval, from values alone.

Each group of planned calls (one stage, model and prompt) is forecast from the past per-call values of that
group when there are some: a bootstrap draws the group's past calls again (B resamples of its m values), takes
each resample's mean μ and standard deviation σ, and the group's total for n planned calls is n·μ + √n·σ·z (z
standard normal: the spread of a sum of n calls). The resamples' totals summed over groups give the interval's
quantiles; the point is n × the past mean. So the interval holds both the doubt about the mean (few past calls:
wide) and the call-to-call spread of the new run. Wall time is the summed call durations over the parallelism
the past runs reached (call time / elapsed, the median run's): it assumes the past runs' concurrency and
connection limits, as a call's duration holds its wait for a connection.

A group without past values is forecast from its prompt length and `max_tokens` only: input tokens are the
prompt's characters / 4 (interval: / 6 to / 3), output tokens at most `max_tokens` a call (the point and the high
end; the low end is one token a call); its wall time is unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

TELEMETRY = "telemetry"
PROMPT_LENGTHS = "prompt lengths and max_tokens"
CHARS_PER_TOKEN = (6.0, 4.0, 3.0)
"""Characters per token: (low tokens, point, high tokens) of a prompt length without past calls."""
MAX_PAST = 2000
"""A group's newest past values used at most (the bootstrap's cost grows with them)."""


@dataclass(frozen=True)
class Interval:
    """A forecast figure: the point and its interval at `level`."""

    expected: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        """The figure as JSON."""
        return {"expected": self.expected, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class PastCalls:
    """Past per-call values of one group (cache hits left out); a list may be empty where usage was unknown."""

    tokens_in: list[float] = field(default_factory=list)
    tokens_out: list[float] = field(default_factory=list)
    cost_usd: list[float] = field(default_factory=list)
    duration_ms: list[float] = field(default_factory=list)
    retries: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class CallGroup:
    """Planned calls of one stage, model and prompt: how many, what the past says, or the prompt's length."""

    stage: str
    model: str
    prompt: str
    calls: int
    past: PastCalls | None
    prompt_chars: float = 0.0
    """Mean characters of one call's prompt (used without past calls)."""
    max_tokens: int = 256
    price: tuple[float, float] | None = None
    """USD per million input and output tokens; None: unknown."""


@dataclass(frozen=True)
class GroupForecast:
    """One group's forecast, for the table."""

    stage: str
    model: str
    prompt: str
    calls: int
    basis: str
    past_calls: int
    tokens_in: Interval
    tokens_out: Interval
    cost_usd: Interval | None

    def to_dict(self) -> dict[str, object]:
        """The group as JSON."""
        return {
            "stage": self.stage,
            "model": self.model,
            "prompt": self.prompt,
            "calls": self.calls,
            "basis": self.basis,
            "past_calls": self.past_calls,
            "tokens_in": self.tokens_in.to_dict(),
            "tokens_out": self.tokens_out.to_dict(),
            "cost_usd": self.cost_usd.to_dict() if self.cost_usd else None,
        }


@dataclass(frozen=True)
class Forecast:
    """The whole run's forecast: figures with intervals, and what they rest on."""

    basis: str
    level: float
    calls: int
    tokens_in: Interval
    tokens_out: Interval
    cost_usd: Interval | None
    wall_s: Interval | None
    retries: Interval | None
    parallelism: float | None
    groups: list[GroupForecast]
    concurrency: int = 1
    unknown_cost: list[str] = field(default_factory=list)
    """Models whose price is unknown (the cost is null: never guessed)."""

    def to_dict(self) -> dict[str, object]:
        """The forecast as JSON."""
        return {
            "basis": self.basis,
            "level": self.level,
            "calls": self.calls,
            "tokens_in": self.tokens_in.to_dict(),
            "tokens_out": self.tokens_out.to_dict(),
            "cost_usd": self.cost_usd.to_dict() if self.cost_usd else None,
            "wall_s": self.wall_s.to_dict() if self.wall_s else None,
            "retries": self.retries.to_dict() if self.retries else None,
            "parallelism": self.parallelism,
            "unknown_cost": self.unknown_cost,
            "groups": [g.to_dict() for g in self.groups],
        }


def _draws(values: list[float], calls: int, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """`resamples` draws of the total of `calls` new calls like `values` (see the module's docstring)."""
    past = np.asarray(values[-MAX_PAST:], dtype=float)
    picks = past[rng.integers(0, len(past), size=(resamples, len(past)))]
    mu, sigma = picks.mean(axis=1), picks.std(axis=1)
    totals: np.ndarray = calls * mu + math.sqrt(calls) * sigma * rng.standard_normal(resamples)
    return np.maximum(totals, 0.0)


def _interval(expected: float, draws: np.ndarray, level: float) -> Interval:
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return Interval(expected, float(min(low, expected)), float(max(high, expected)))


def _no_spread(value: float) -> Interval:
    return Interval(value, value, value)


class _Sum:
    """Totals of one quantity over groups: points add, draws add resample by resample."""

    def __init__(self, resamples: int) -> None:
        self.expected, self.low_only, self.high_only = 0.0, 0.0, 0.0
        self.draws = np.zeros(resamples)

    def add_draws(self, expected: float, draws: np.ndarray) -> None:
        self.expected += expected
        self.draws = self.draws + draws

    def add_bounds(self, interval: Interval) -> None:
        self.expected += interval.expected
        self.low_only += interval.low
        self.high_only += interval.high

    def interval(self, level: float) -> Interval:
        tail = (1 - level) / 2
        low, high = np.quantile(self.draws, [tail, 1 - tail])
        return Interval(self.expected, float(low) + self.low_only, float(high) + self.high_only)


def _from_prompt(group: CallGroup) -> tuple[Interval, Interval]:
    low, point, high = (group.calls * group.prompt_chars / c for c in CHARS_PER_TOKEN)
    tokens_out = group.calls * group.max_tokens
    return Interval(point, low, high), Interval(float(tokens_out), float(group.calls), float(tokens_out))


def _priced(tokens_in: Interval, tokens_out: Interval, price: tuple[float, float]) -> Interval:
    def cost(a: float, b: float) -> float:
        return (a * price[0] + b * price[1]) / 1_000_000

    return Interval(
        cost(tokens_in.expected, tokens_out.expected),
        cost(tokens_in.low, tokens_out.low),
        cost(tokens_in.high, tokens_out.high),
    )


def forecast(
    groups: list[CallGroup],
    *,
    concurrency: int,
    parallelism: float | None,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Forecast:
    """Forecast the bill of `groups` of planned calls; `parallelism` is what past runs reached (None: unknown);
    `concurrency` is the planned one, kept in the forecast for the record."""
    rng = np.random.default_rng(seed)
    sums = {name: _Sum(resamples) for name in ("tokens_in", "tokens_out", "cost_usd", "duration_ms", "retries")}
    rows: list[GroupForecast] = []
    unknown_cost: list[str] = []
    wall_known = retries_known = bool(groups)
    for group in groups:
        past = group.past
        if past is not None and past.tokens_in and past.tokens_out:
            row_in = _group_figure(sums["tokens_in"], past.tokens_in, group.calls, rng, resamples, level)
            row_out = _group_figure(sums["tokens_out"], past.tokens_out, group.calls, rng, resamples, level)
            basis = TELEMETRY
        else:
            row_in, row_out = _from_prompt(group)
            sums["tokens_in"].add_bounds(row_in)
            sums["tokens_out"].add_bounds(row_out)
            basis = PROMPT_LENGTHS
        cost: Interval | None = None
        if basis == TELEMETRY and past is not None and len(past.cost_usd) == len(past.tokens_in):
            cost = _group_figure(sums["cost_usd"], past.cost_usd, group.calls, rng, resamples, level)
        elif group.price is not None:
            cost = _priced(row_in, row_out, group.price)
            sums["cost_usd"].add_bounds(cost)
        elif group.calls:
            unknown_cost.append(group.model)
        if past is not None and past.duration_ms:
            sums["duration_ms"].add_draws(
                group.calls * float(np.mean(past.duration_ms)), _draws(past.duration_ms, group.calls, rng, resamples)
            )
        else:
            wall_known = wall_known and group.calls == 0
        if past is not None and past.retries:
            sums["retries"].add_draws(
                group.calls * float(np.mean(past.retries)), _draws(past.retries, group.calls, rng, resamples)
            )
        else:
            retries_known = retries_known and group.calls == 0
        past_n = len(past.tokens_in) if past is not None else 0
        rows.append(
            GroupForecast(group.stage, group.model, group.prompt, group.calls, basis, past_n, row_in, row_out, cost)
        )
    wall = None
    effective = parallelism  # a call's duration holds its wait for a connection: no cap by the concurrency
    if wall_known and effective:
        calls_s = sums["duration_ms"].interval(level)
        wall = Interval(*(v / 1000 / effective for v in (calls_s.expected, calls_s.low, calls_s.high)))
    basis = TELEMETRY if rows and all(r.basis == TELEMETRY for r in rows) else PROMPT_LENGTHS
    if rows and basis == PROMPT_LENGTHS and any(r.basis == TELEMETRY for r in rows):
        basis = f"{TELEMETRY} and {PROMPT_LENGTHS}"
    return Forecast(
        basis=basis,
        level=level,
        calls=sum(g.calls for g in groups),
        tokens_in=sums["tokens_in"].interval(level),
        tokens_out=sums["tokens_out"].interval(level),
        cost_usd=None if unknown_cost else sums["cost_usd"].interval(level),
        wall_s=wall,
        retries=sums["retries"].interval(level) if retries_known else None,
        parallelism=effective,
        groups=rows,
        concurrency=concurrency,
        unknown_cost=sorted(set(unknown_cost)),
    )


def _group_figure(
    total: _Sum, values: list[float], calls: int, rng: np.random.Generator, resamples: int, level: float
) -> Interval:
    draws = _draws(values, calls, rng, resamples)
    expected = calls * float(np.mean(values))
    total.add_draws(expected, draws)
    return _interval(expected, draws, level)


def observed_parallelism(spans: list[tuple[float, float]]) -> float | None:
    """Calls' (start, end) seconds of one run → summed call time / elapsed time (≥ 1); None without calls."""
    if not spans:
        return None
    busy = sum(end - start for start, end in spans)
    elapsed = max(end for _, end in spans) - min(start for start, _ in spans)
    return max(1.0, busy / elapsed) if elapsed > 0 else 1.0
