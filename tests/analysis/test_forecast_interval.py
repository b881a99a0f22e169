"""The forecast's interval (scoregate.analysis.forecast) holds the next run's total as often as it says."""

from __future__ import annotations

import numpy as np

from scoregate.analysis.forecast import PROMPT_LENGTHS, TELEMETRY, CallGroup, PastCalls, forecast


def test_the_interval_covers_the_total_of_a_new_run_about_as_often_as_its_level() -> None:
    rng = np.random.default_rng(7)
    trials, covered, past_n, planned = 300, 0, 40, 200
    for trial in range(trials):
        draw = lambda n: list(rng.lognormal(mean=6.0, sigma=0.6, size=n))  # noqa: E731 - skewed token counts
        past = PastCalls(tokens_in=draw(past_n), tokens_out=draw(past_n))
        result = forecast([CallGroup("task", "m", "p", planned, past)], concurrency=4, parallelism=None,
                          level=0.9, resamples=400, seed=trial)  # fmt: skip
        actual = sum(draw(planned))
        covered += result.tokens_in.low <= actual <= result.tokens_in.high
    rate = covered / trials
    assert 0.84 <= rate <= 0.97, rate  # 90% nominal; 300 trials: ±3.5 points of Monte Carlo error at 2 sd


def test_few_past_calls_give_a_wider_interval_than_many() -> None:
    rng = np.random.default_rng(1)
    values = list(rng.normal(500, 100, size=400))

    def width(n: int) -> float:
        group = CallGroup("task", "m", "p", 100, PastCalls(tokens_in=values[:n], tokens_out=values[:n]))
        fc = forecast([group], concurrency=1, parallelism=None)
        return fc.tokens_in.high - fc.tokens_in.low

    assert width(5) > 1.5 * width(400)


def test_without_past_calls_output_tokens_are_at_most_max_tokens_and_cost_needs_a_price() -> None:
    group = CallGroup("task", "m", "p", 10, None, prompt_chars=400, max_tokens=300)
    fc = forecast([group], concurrency=2, parallelism=None)
    assert fc.basis == PROMPT_LENGTHS
    assert (fc.tokens_out.low, fc.tokens_out.expected, fc.tokens_out.high) == (10, 3000, 3000)
    assert (fc.tokens_in.low, fc.tokens_in.expected, fc.tokens_in.high) == (10 * 400 / 6, 1000, 10 * 400 / 3)
    assert fc.cost_usd is None and fc.unknown_cost == ["m"] and fc.wall_s is None
    priced = forecast(
        [CallGroup("task", "m", "p", 10, None, 400, 300, price=(1.0, 2.0))], concurrency=2, parallelism=None
    )
    assert priced.cost_usd is not None and priced.cost_usd.high == (4000 / 3 + 2 * 3000) / 1e6


def test_wall_time_is_the_calls_time_over_the_parallelism_past_runs_reached() -> None:
    past = PastCalls(tokens_in=[10.0] * 50, tokens_out=[5.0] * 50, duration_ms=[1000.0] * 50)
    group = CallGroup("task", "m", "p", 60, past)
    assert forecast([group], concurrency=8, parallelism=3.0).wall_s.expected == 20.0  # type: ignore[union-attr]
    assert forecast([group], concurrency=8, parallelism=None).wall_s is None
    assert forecast([group], concurrency=2, parallelism=3.0).basis == TELEMETRY
