"""How a figure reads in text: a duration, a score's direction, an output, a prompt version (what every layer prints
alike)."""

from __future__ import annotations

import json
from typing import Any


def clock_text(seconds: float | None) -> str:
    """Return a duration readably: `0.4 s`, `31.4 s` under a minute, then `2m05s`, `1h02m`; `—` when unknown."""
    if seconds is None:
        return "—"
    seconds = max(seconds, 0.0)
    if round(seconds, 1) < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}m"


def duration_text(seconds: float) -> str:
    """Return a forecast or budget duration: `clock_text`, but a figure under 0.05 s keeps two digits (`0.012 s`,
    never `0.0 s`)."""
    return f"{seconds:.2g} s" if 0 < seconds < 0.05 else clock_text(seconds)


def direction_arrow(direction: str) -> str:
    """Return ↑ (higher is better), ↓ (lower is better) or · (no direction)."""
    return {"higher": "↑", "lower": "↓"}.get(direction, "·")


def output_text(output: Any) -> str:
    """Return an output as text: strings as they are, anything else as indented JSON."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return json.dumps(output, indent=2, ensure_ascii=False, default=str)


def version_label(version: int | str) -> str:
    """`v3` for a Langfuse version, `local-1a2b3c4d` for a prompt file's."""
    return f"v{version}" if isinstance(version, int) else str(version)


def version_name(prompt: str, version: int | str) -> str:
    """`NAME v3` for a Langfuse version, `NAME@local-1a2b3c4d` for a prompt file's."""
    return f"{prompt} v{version}" if isinstance(version, int) else f"{prompt}@{version}"
