"""How figures read in text: durations, directions, outputs."""

from __future__ import annotations

from scoregate.support.figures import clock_text, direction_arrow, duration_text, output_text


def test_clock_text_reads_in_seconds_then_minutes_then_hours() -> None:
    assert clock_text(None) == "—"
    assert clock_text(0.06) == "0.1 s"
    assert clock_text(31.44) == "31.4 s"
    assert clock_text(59.96) == "1m00s"
    assert clock_text(125) == "2m05s"
    assert clock_text(3599.4) == "59m59s"
    assert clock_text(3720) == "1h02m"
    assert clock_text(30 * 3600 + 59) == "30h01m"


def test_forecast_and_budget_durations_keep_small_figures_and_carry_the_minute() -> None:
    assert duration_text(0.012) == "0.012 s"  # never `0.0 s` (or `0.0 min`)
    assert duration_text(2.6) == "2.6 s"
    assert duration_text(179.6) == "3m00s"  # not `2m60s`
    assert duration_text(3720) == "1h02m"


def test_a_direction_reads_as_an_arrow_and_no_direction_as_a_dot() -> None:
    assert [direction_arrow(d) for d in ("higher", "lower", "none")] == ["↑", "↓", "·"]


def test_an_output_reads_as_itself_or_as_indented_json() -> None:
    assert output_text(None) == ""
    assert output_text("plain") == "plain"
    assert output_text({"a": "é", "n": 1}) == '{\n  "a": "é",\n  "n": 1\n}'
