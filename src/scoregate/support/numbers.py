"""Numbers as a person reads them, for any page or text that shows one."""

from __future__ import annotations

import math


def fmt(value: float | None, digits: int = 3) -> str:
    """A number as a person reads it: 3 significant digits, thousands without exponent, `—` for none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
