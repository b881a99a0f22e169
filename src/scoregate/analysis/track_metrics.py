"""What a ranking is told of a track: the run-level metrics it adds to summary.json, and how tables name them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def _same_name(name: str, names: Collection[str]) -> str:
    return name


@dataclass(frozen=True)
class TrackMetrics:
    """The run-level metrics a track adds to summary.json, which a ranking compares as `<name>.<key>`."""

    name: str
    read: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    """summary.json → the track's run-level metrics by key (`{}` for a run without the track)."""
    label: Callable[[str, Collection[str]], str] = _same_name
    """(metric, every metric shown) → how tables name it (e.g. telling a micro value from a per-item mean)."""


def track_label(metric: str, names: Collection[str], tracks: Sequence[TrackMetrics]) -> str:
    """The first track's name for `metric` that differs from it, else `metric`."""
    return next((found for t in tracks if (found := t.label(metric, names)) != metric), metric)
