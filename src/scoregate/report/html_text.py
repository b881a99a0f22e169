"""Text the report's HTML sections share: an escaped value and a run metric as a person reads it."""

from __future__ import annotations

from html import escape
from typing import Any

from scoregate.report.charts import fmt


def esc(value: Any) -> str:
    """A value as HTML text; None reads as a dash."""
    return escape("—" if value is None else str(value))


def run_metric_text(key: str, value: Any) -> str:
    """A run metric as a person reads it: rates as percentages, the rest to 4 significant digits."""
    if key.endswith("_rate") and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value * 100:.1f}%"
    return fmt(value, 4)
