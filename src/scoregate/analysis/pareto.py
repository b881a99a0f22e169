"""Pareto fronts of accuracy against a cost (latency, USD): which runs no other run beats on both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _dominates(p: tuple[float, float], q: tuple[float, float]) -> bool:
    """p = (accuracy, cost) dominates q: no worse on both (higher accuracy, lower cost), better on one."""
    return p[0] >= q[0] and p[1] <= q[1] and (p[0] > q[0] or p[1] < q[1])


def pareto_front(
    points: Mapping[str, tuple[float | None, float | None]], *, higher_is_better: bool = True
) -> dict[str, Any]:
    """Return the labels on the accuracy-vs-cost frontier (cheapest first) and those left out for lack of data."""
    known = {k: (a if higher_is_better else -a, c) for k, (a, c) in points.items() if a is not None and c is not None}
    frontier = [k for k, p in known.items() if not any(_dominates(q, p) for o, q in known.items() if o != k)]
    frontier.sort(key=lambda k: (known[k][1], -known[k][0]))
    return {"frontier": frontier, "not_measured": sorted(set(points) - set(known))}
