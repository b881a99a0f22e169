"""A run's budget: refuse to start when the forecast's upper end exceeds it; stop (interrupted, resumable) once
the run's own spending or time reaches it. The budget holds for one invocation: a resume gets its own."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scoregate.catalog.config_models import Settings
from scoregate.errors import ScoregateError
from scoregate.store.records import ItemResult

if TYPE_CHECKING:  # the forecast loads numpy: a run without a budget never needs it
    from scoregate.app.forecast import RunForecast


@dataclass(frozen=True)
class Budget:
    """Most USD and minutes one invocation of a run may take; None: no limit."""

    usd: float | None = None
    minutes: float | None = None

    @property
    def any(self) -> bool:
        """True when a limit is set."""
        return self.usd is not None or self.minutes is not None


def budget_of(settings: Settings, usd: float | None, minutes: float | None) -> Budget:
    """The run's budget: the options, else scoregate.yaml's `settings.budget`; a limit must be above 0."""
    for option, value in (("--budget-usd", usd), ("--budget-minutes", minutes)):
        if value is not None and not value > 0:
            raise ScoregateError(
                f"{option} {value:g}: a budget must be more than 0 (a budget of 0 allows no call)",
                hint=f"give a positive {option}, or leave it out to run without that limit",
            )
    return Budget(
        usd if usd is not None else settings.budget.usd, minutes if minutes is not None else settings.budget.minutes
    )


class BudgetRefused(ScoregateError):
    """The forecast's upper end exceeds the budget: the run does not start."""


def _money(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _duration(seconds: float) -> str:
    """`0.012 s`, `2.6 s` under a minute (never `0.0 min`), then `3m05s`, `1h02m`: the progress lines' clock."""
    from scoregate.support.figures import duration_text

    return duration_text(seconds)


def duration_and_minutes(minutes: float) -> str:
    """A time budget as given (`2 min`), with its seconds when under a minute (`0.03 min (1.8 s)`)."""
    return f"{minutes:g} min" if minutes >= 1 else f"{minutes:g} min ({_duration(minutes * 60)})"


def check_forecast(planned: RunForecast, budget: Budget, experiment: str) -> list[str]:
    """Raise BudgetRefused when the forecast's upper end exceeds a limit; return notes on limits it cannot check."""
    fc, notes, over = planned.forecast, [], []
    level = f"{fc.level:.0%}"
    if budget.usd is not None:
        if fc.cost_usd is None:
            notes.append(
                f"budget {_money(budget.usd)}: the cost cannot be forecast (no price for "
                f"{', '.join(fc.unknown_cost)}); the run stops if its recorded cost reaches the budget"
            )
        elif fc.cost_usd.high > budget.usd:
            over.append(
                f"cost {_money(fc.cost_usd.expected)} expected, up to {_money(fc.cost_usd.high)} ({level} interval) "
                f"> budget {_money(budget.usd)}"
            )
    if budget.minutes is not None:
        if fc.wall_s is None:
            notes.append(
                f"budget {duration_and_minutes(budget.minutes)}: the wall time cannot be forecast without past runs; "
                "the run stops when it reaches the budget"
            )
        elif fc.wall_s.high > budget.minutes * 60:
            over.append(
                f"wall time {_duration(fc.wall_s.expected)} expected, up to {_duration(fc.wall_s.high)} "
                f"({level} interval) > budget {duration_and_minutes(budget.minutes)}"
            )
    if over:
        raise BudgetRefused(
            f"not started: the forecast of {planned.items} item run(s), {planned.calls} calls, exceeds the budget: "
            + "; ".join(over)
            + f" (forecast from {fc.basis}{f'; wall time {planned.wall_basis}' if planned.wall_basis else ''})",
            hint=f"raise the budget (--budget-usd / --budget-minutes or settings.budget), run fewer items "
            f"(--limit), or see the forecast of a whole new run with `scoregate run {experiment} --dry-run`",
        )
    return notes


class BudgetExceeded(Exception):
    """The run's spending or time reached its budget; the run stops, interrupted and resumable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetWatch:
    """Sums the cost of the calls this invocation made (cache hits cost nothing) and its time, item by item."""

    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.spent = 0.0
        self._clock = clock
        self._started = clock()

    @property
    def elapsed_s(self) -> float:
        """Seconds since the watch started."""
        return self._clock() - self._started

    def seconds_left(self) -> float | None:
        """Seconds until the time budget is spent; None without one."""
        if self.budget.minutes is None:
            return None
        return max(0.0, self.budget.minutes * 60 - self.elapsed_s)

    def observe(self, result: ItemResult) -> None:
        """Count one finished item's calls; raise BudgetExceeded once a limit is reached."""
        self.spent += sum(c.cost_usd or 0.0 for c in result.calls if not c.cached)
        if self.budget.usd is not None and self.spent >= self.budget.usd:
            raise BudgetExceeded(f"spent {_money(self.spent)} of the budget {_money(self.budget.usd)}")
        left = self.seconds_left()
        if left is not None and left <= 0:
            raise BudgetExceeded(self.out_of_time())

    def out_of_time(self) -> str:
        """Why the time budget stopped the run."""
        minutes = self.budget.minutes or 0.0
        return f"took {_duration(self.elapsed_s)} of the budget {duration_and_minutes(minutes)}"
