"""What the v4 dashboard page shows in a NUMBER tile: the digits a tile's size leaves room for.

Read from Langfuse's web source. `DashboardGrid` lays tiles on a react-grid-layout of 12 columns with 16 px
margins and a row height of 9/16 of a column's share of the grid width; `DashboardWidget` draws a card with
16 px padding and a header (the widget's name and description) above the chart. `BigNumber` then picks the
largest font (text-8xl down to text-sm) whose estimated text fits 95% of the chart's width and whose line fits
90% of its height, and formats the value with as many decimals as that font leaves characters for
(`formatBigNumber`: at most 3, trailing zeros dropped). A tall, narrow tile gets a large font and few
characters: a 3-column tile 5 rows high shows 0.25 as "0.3" on a 1152 px grid, as seen on a v4.16 server.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

COLUMNS = 12
MARGIN = 16
"""react-grid-layout's margin between tiles, and its container padding (the same by default)."""
CARD_PADDING = 16
CARD_HEADER = 44
"""The card's header above the chart: a text-base title line and a text-sm description line (an estimate)."""
FONT_SIZES = (128, 96, 72, 60, 48, 36, 24, 20, 18, 16, 14)
"""BigNumber's fonts in px, text-8xl down to text-sm."""


def to_fixed(value: float, decimals: int) -> str:
    """JavaScript's `Number.prototype.toFixed`: halves round away from zero (Python's format rounds to even)."""
    exact = Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{exact:.{decimals}f}"


def _strip_zeros(text: str) -> str:
    return re.sub(r"\.$", "", re.sub(r"(\.\d*?)0+$", r"\1", text))


def format_big_number(value: float, max_chars: int) -> str:
    """`formatBigNumber`: the value with its unit (K, M, B, T) and the decimals `max_chars` leaves room for."""
    size = abs(value)
    sign = 1 if value < 0 else 0
    for floor, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if size >= floor:
            base = value / floor
            room = max_chars - len(str(math.floor(abs(base)))) - len(unit) - sign - 1
            decimals = max(0, min(3, room)) if max_chars else 1
            return _strip_zeros(to_fixed(base, decimals)) + unit
    if size >= 1:
        decimals = min(3, max(0, max_chars - len(str(math.floor(size))) - sign - 1)) if max_chars else 2
        return _strip_zeros(to_fixed(value, max(0, min(3, decimals))))
    if size > 0:
        first_digit = re.search(r"[1-9]", repr(size))
        if first_digit is None:
            return "0"
        decimals = min(first_digit.start() + 2, max_chars - 2 if max_chars else 6, 8)
        return _strip_zeros(to_fixed(value, max(0, min(3, decimals))))
    return "0"


def chart_area(placement: dict[str, Any], grid_width: float) -> tuple[float, float]:
    """The width and height (px) a tile at `placement` leaves its chart on a grid `grid_width` px wide."""
    column = (grid_width - MARGIN * (COLUMNS + 1)) / COLUMNS
    row = grid_width / COLUMNS * 9 / 16
    width = column * placement["width"] + MARGIN * (placement["width"] - 1)
    height = row * placement["height"] + MARGIN * (placement["height"] - 1)
    return width - 2 * CARD_PADDING, height - 2 * CARD_PADDING - CARD_HEADER


def number_tile_text(value: float, placement: dict[str, Any], grid_width: float) -> str:
    """The text a NUMBER tile at `placement` shows for `value` on a dashboard grid `grid_width` px wide."""
    width, height = chart_area(placement, grid_width)
    room_width, room_height = width * 0.95, height * 0.9
    for px in FONT_SIZES:
        char_width = px * 0.55
        max_chars = math.floor(room_width / char_width)
        text = format_big_number(value, max_chars)
        if len(text) * char_width <= room_width and px * 1.1 <= room_height:
            return text
    return format_big_number(value, 0)  # no font fits: text-sm, and no character budget
