"""Read a past run's per-call telemetry (`runs/<id>/metrics.json`): its rows and the time span of each call."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any


def telemetry_number(value: Any) -> float | None:
    """Return a telemetry value as a float when it is a number (a bool is not), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_metrics(path: Path) -> dict[str, Any] | None:
    """A run's metrics.json with its rows; None when it cannot be read (it is then no evidence)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # an unreadable past run is not evidence; the others still are
    return data if isinstance(data, dict) and isinstance(data.get("rows"), list) else None


def call_spans(rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The (start, end) seconds of each telemetry row that has a time and a duration."""
    spans = []
    for row in rows:
        duration = telemetry_number(row.get("duration_ms"))
        try:
            start = datetime.fromisoformat(str(row.get("timestamp"))).timestamp()
        except ValueError:
            continue
        if duration is not None:
            spans.append((start, start + duration / 1000))
    return spans
