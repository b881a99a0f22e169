"""The report's inline SVG charts on the data real runs produce (one item, one value, nothing measured)."""

from __future__ import annotations

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
