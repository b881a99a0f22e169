"""The report's inline SVG charts on the data real runs produce (one item, one value, nothing measured)."""

from __future__ import annotations

import re

from scoregate.report.charts import bars, fmt, histogram, scatter


def test_a_single_measured_latency_draws_one_bar() -> None:
    # a one-item run through the real local model: one latency, not a whole number (was a ZeroDivisionError)
    svg = histogram([1234.5678], label="task latency ms", marks={"p50": 1234.5678, "p95": 1234.5678})
    assert svg.count("<rect") == 1 and "1,235: 1 item(s)" in svg


def test_histograms_bin_ranges_and_count_every_value() -> None:
    values = [float(v) for v in range(100)] + [None]
    svg = histogram([v / 7 for v in values if v is not None] + [None], label="x", bins=10)
    assert svg.count("<rect") == 10 and "100 measured" in svg
    assert histogram([None, None], label="x") == ""


def test_bars_and_scatter_skip_what_was_not_measured() -> None:
    assert bars({"a": None}, label="x") == ""
    assert "b: 50.0%" in bars({"a": None, "b": 0.5}, label="x", percent=True)
    svg = scatter(
        [("m1", 1.0, 0.9), ("m2", None, 0.5), ("m3", 2.0, 0.95)], x_label="ms", y_label="eqs", front=["m1", "m3"]
    )
    assert svg.count("<circle") == 2 and "<polyline" in svg
    assert fmt(None) == "—" and fmt(0.123456) == "0.123" and fmt(12345.6) == "12,346"


def bar_titles(svg: str) -> list[str]:
    """Each bar's hover text, left to right: `value: n item(s)` or `low to high: n item(s)`."""
    return re.findall(r"<title>([^<]*item\(s\))</title>", svg)


def test_a_judge_scores_histogram_shows_every_value_of_its_declared_scale() -> None:
    # faithfulness on 1-5, judged 1, 3 and 5 only: 2 and 4 are bars of zero height, so 1 and 3 never look adjacent
    svg = histogram([1, 3, 5, 5, None], label="faithfulness_score", scale=(1.0, 5.0))
    assert bar_titles(svg) == ["1: 1 item(s)", "2: 0 item(s)", "3: 1 item(s)", "4: 0 item(s)", "5: 2 item(s)"]
    # all at the top of the scale: the scale's ends still show
    assert [t.split(":")[0] for t in bar_titles(histogram([5, 5], label="x", scale=(1.0, 5.0)))] == list("12345")
    # a value outside the declared scale is still drawn, never hidden
    assert bar_titles(histogram([0, 2], label="x", scale=(1.0, 3.0)))[0] == "0: 1 item(s)"


def test_whole_values_without_a_declared_scale_keep_the_gaps_between_them() -> None:
    svg = histogram([1, 4, 5], label="conciseness_score")  # a count or an old run with no evaluator file
    assert bar_titles(svg) == ["1: 1 item(s)", "2: 0 item(s)", "3: 0 item(s)", "4: 1 item(s)", "5: 1 item(s)"]
    assert bar_titles(histogram([True, True], label="passed", scale=(0.0, 1.0))) == ["0: 0 item(s)", "1: 2 item(s)"]


def test_continuous_and_widely_spread_scores_keep_their_ranges() -> None:
    svg = histogram([0.25, 0.5, 0.75, 1.0], label="eqs", scale=(0.0, 1.0), bins=4)
    assert bar_titles(svg)[0] == "0.25 to 0.438: 1 item(s)" and len(bar_titles(svg)) == 4
    spread = histogram([0, 50, 100], label="word_count", bins=10)  # 101 whole values: ranges, not 101 bars
    assert len(bar_titles(spread)) == 10 and " to " in bar_titles(spread)[0]
