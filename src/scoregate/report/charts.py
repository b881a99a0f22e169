"""Inline SVG charts for the HTML report: histograms with marked values, horizontal bars, scatter with a front.

Each function returns one `<svg>` element as a string; nothing is loaded from outside the page. Every bar
and point carries a `<title>`, so hovering shows its exact value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import numpy as np

from scoregate.analysis.columns import FloatColumn
from scoregate.support.numbers import fmt

WIDTH, HEIGHT = 360, 150
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 40, 12, 10, 30
MARK_COLOURS = ("#b45309", "#b91c1c", "#7c3aed")


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _scale_values(distinct: np.ndarray, count: int, scale: tuple[float, float] | None) -> list[float] | None:
    """Every whole value from the lowest to the highest, the declared `scale`'s ends included, so an absent value
    draws a zero-height bar (1, 3, 5 of a 1-5 judge score keep their gaps); None when the values need ranges
    (not whole numbers, or more than `count` of them). A single value, whole or not, is one bar."""
    if bool(np.all(np.floor(distinct) == distinct)):
        low, high = float(distinct[0]), float(distinct[-1])
        if scale is not None and all(float(b).is_integer() for b in scale):
            low, high = min(low, float(scale[0])), max(high, float(scale[1]))
        if high - low + 1 <= count:
            return [low + k for k in range(int(high - low) + 1)]
    return [float(distinct[0])] if len(distinct) == 1 else None


def _bins(values: np.ndarray, count: int) -> tuple[float, float, list[int]]:
    low, high = float(values.min()), float(values.max())
    width = (high - low) / count
    slots = np.minimum(((values - low) / width).astype(np.int64), count - 1)  # int() of a value ≥ 0: its floor
    return low, high, [int(n) for n in np.bincount(slots, minlength=count)]


def _measured(values: Sequence[float | None]) -> np.ndarray:
    """The finite measured values as a float array (a FloatColumn's without a Python object per item)."""
    if isinstance(values, FloatColumn):
        x = values.measured()
    else:
        x = np.array([float(v) for v in values if v is not None], dtype=np.float64)
    return x[np.isfinite(x)]


def histogram(
    values: Sequence[float | None],
    *,
    label: str,
    marks: Mapping[str, float | None] | None = None,
    bins: int = 24,
    scale: tuple[float, float] | None = None,
) -> str:
    """A histogram of the measured `values`, with vertical lines at `marks` (e.g. p50/p95/p99); '' when none.

    Whole values (counts, booleans, a judge's 1-5) get a bar per value of their `scale` (the declared range) and
    every value between, absent ones at zero height; other values are binned into `bins` ranges."""
    measured = _measured(values)
    if not measured.size:
        return ""
    distinct = np.unique(measured)
    on_scale = _scale_values(distinct, bins, scale)
    discrete = on_scale is not None
    if on_scale is not None:
        low, high, counts = on_scale[0], on_scale[-1], [int(np.count_nonzero(measured == v)) for v in on_scale]
    else:
        low, high, counts = _bins(measured, bins)
    pad_top = PAD_TOP + (14 if marks and not discrete else 0)  # room for the marks' legend above the bars
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - pad_top - PAD_BOTTOM
    top = max(counts)
    body = [
        f'<line x1="{PAD_LEFT}" y1="{pad_top + plot_h}" x2="{PAD_LEFT + plot_w}" y2="{pad_top + plot_h}" '
        'class="axis"/>',
        f'<text x="{PAD_LEFT - 4}" y="{pad_top + 8}" class="tick" text-anchor="end">{top}</text>',
        f'<text x="{PAD_LEFT - 4}" y="{pad_top + plot_h}" class="tick" text-anchor="end">0</text>',
    ]
    slot = plot_w / len(counts)
    for i, n in enumerate(counts):
        h = plot_h * n / top
        x = PAD_LEFT + i * slot
        if on_scale is not None:
            what = fmt(on_scale[i])
        else:
            step = (high - low) / len(counts)
            what = f"{fmt(low + i * step)} to {fmt(low + (i + 1) * step)}"
        body.append(
            f'<rect x="{x + 1:.1f}" y="{pad_top + plot_h - h:.1f}" width="{max(slot - 2, 1):.1f}" height="{h:.1f}" '
            f'class="bar"><title>{escape(what)}: {n} item(s)</title></rect>'
        )
        if discrete and len(counts) <= 12:
            body.append(
                f'<text x="{x + slot / 2:.1f}" y="{pad_top + plot_h + 12}" class="tick" '
                f'text-anchor="middle">{escape(what)}</text>'
            )
    if not discrete:
        body.append(f'<text x="{PAD_LEFT}" y="{pad_top + plot_h + 12}" class="tick">{escape(fmt(low))}</text>')
        body.append(
            f'<text x="{PAD_LEFT + plot_w}" y="{pad_top + plot_h + 12}" class="tick" '
            f'text-anchor="end">{escape(fmt(high))}</text>'
        )
    span = (high - low) or 1.0
    legend_x = PAD_LEFT + 4.0
    for k, (name, at) in enumerate((marks or {}).items()):
        if at is None or discrete:
            continue
        x = PAD_LEFT + plot_w * (min(max(at, low), high) - low) / span
        colour = MARK_COLOURS[k % len(MARK_COLOURS)]
        body.append(
            f'<line x1="{x:.1f}" y1="{pad_top}" x2="{x:.1f}" y2="{pad_top + plot_h}" stroke="{colour}" '
            f'stroke-width="1.5" stroke-dasharray="4,2"><title>{escape(name)} = {escape(fmt(at))}</title></line>'
        )
        caption = f"{name} {fmt(at)}"
        body.append(f'<text x="{legend_x:.1f}" y="{PAD_TOP + 2}" class="mark" fill="{colour}">{escape(caption)}</text>')
        legend_x += 6.5 * len(caption) + 8
    body.append(
        f'<text x="{PAD_LEFT + plot_w / 2:.1f}" y="{HEIGHT - 4}" class="label" text-anchor="middle">'
        f"{escape(label)} · {measured.size} measured</text>"
    )
    return _svg(WIDTH, HEIGHT, body, f"histogram of {label}")


def bars(values: Mapping[str, float | None], *, label: str, percent: bool = False) -> str:
    """Horizontal bars, one per key, labelled with the value; '' when there is nothing to draw."""
    known = {k: float(v) for k, v in values.items() if v is not None}
    if not known:
        return ""
    row, name_w, width = 18, 150, WIDTH + 60
    top = max(known.values()) or 1.0
    plot_w = width - name_w - 60
    body: list[str] = []
    for i, (name, value) in enumerate(known.items()):
        y = PAD_TOP + i * row
        shown = f"{value:.1%}" if percent else fmt(value)
        w = plot_w * max(value, 0.0) / top
        body.append(f'<text x="{name_w - 6}" y="{y + 12}" class="tick" text-anchor="end">{escape(name)}</text>')
        body.append(
            f'<rect x="{name_w}" y="{y + 2}" width="{w:.1f}" height="{row - 5}" class="bar">'
            f"<title>{escape(name)}: {escape(shown)}</title></rect>"
        )
        body.append(f'<text x="{name_w + w + 4:.1f}" y="{y + 12}" class="tick">{escape(shown)}</text>')
    height = PAD_TOP + len(known) * row + 18
    body.append(f'<text x="{width / 2:.0f}" y="{height - 4}" class="label" text-anchor="middle">{escape(label)}</text>')
    return _svg(width, height, body, label)


def scatter(
    points: Sequence[tuple[str, float | None, float | None]],
    *,
    x_label: str,
    y_label: str,
    front: Sequence[str] = (),
) -> str:
    """Points (label, x, y) with the labels in `front` joined by a line (a Pareto front); '' when none is known."""
    known = [(name, float(x), float(y)) for name, x, y in points if x is not None and y is not None]
    if not known:
        return ""
    width, height = WIDTH + 60, HEIGHT + 60
    plot_w, plot_h = width - PAD_LEFT - 20 - PAD_RIGHT, height - PAD_TOP - PAD_BOTTOM - 10
    left = PAD_LEFT + 20
    xs, ys = [p[1] for p in known], [p[2] for p in known]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x_pad, y_pad = (x1 - x0) * 0.1 or abs(x0) * 0.1 or 1.0, (y1 - y0) * 0.1 or abs(y0) * 0.1 or 0.1
    x0, x1, y0, y1 = x0 - x_pad, x1 + x_pad, y0 - y_pad, y1 + y_pad
    if min(xs) >= 0:
        x0 = max(x0, 0.0)  # latency and cost are never negative: do not show a negative axis

    def at(x: float, y: float) -> tuple[float, float]:
        return left + plot_w * (x - x0) / (x1 - x0), PAD_TOP + plot_h * (1 - (y - y0) / (y1 - y0))

    body = [
        f'<line x1="{left}" y1="{PAD_TOP + plot_h}" x2="{left + plot_w}" y2="{PAD_TOP + plot_h}" class="axis"/>',
        f'<line x1="{left}" y1="{PAD_TOP}" x2="{left}" y2="{PAD_TOP + plot_h}" class="axis"/>',
        f'<text x="{left}" y="{PAD_TOP + plot_h + 12}" class="tick">{escape(fmt(x0))}</text>',
        f'<text x="{left + plot_w}" y="{PAD_TOP + plot_h + 12}" class="tick" text-anchor="end">'
        f"{escape(fmt(x1))}</text>",
        f'<text x="{left - 4}" y="{PAD_TOP + plot_h}" class="tick" text-anchor="end">{escape(fmt(y0))}</text>',
        f'<text x="{left - 4}" y="{PAD_TOP + 8}" class="tick" text-anchor="end">{escape(fmt(y1))}</text>',
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" class="label" text-anchor="middle">'
        f"{escape(x_label)}</text>",
        f'<text x="12" y="{PAD_TOP + plot_h / 2:.0f}" class="label" text-anchor="middle" '
        f'transform="rotate(-90 12 {PAD_TOP + plot_h / 2:.0f})">{escape(y_label)}</text>',
    ]
    on_front = [p for name in front for p in known if p[0] == name]
    if len(on_front) > 1:
        path = " ".join(f"{a:.1f},{b:.1f}" for a, b in (at(x, y) for _, x, y in sorted(on_front, key=lambda p: p[1])))
        body.append(f'<polyline points="{path}" class="front"/>')
    for name, x, y in known:
        cx, cy = at(x, y)
        cls = "point front-point" if name in front else "point"
        body.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" class="{cls}"><title>{escape(name)}: '
            f"{escape(x_label)} {escape(fmt(x))}, {escape(y_label)} {escape(fmt(y))}</title></circle>"
        )
        body.append(f'<text x="{cx + 7:.1f}" y="{cy - 6:.1f}" class="tick">{escape(name)}</text>')
    return _svg(width, height, body, f"{y_label} against {x_label}")
