"""A rollout's two independent samples made into one sequence of differences, within time windows.

Pure, no I/O. The two versions' scored traces are independent samples, not pairs. Within each time window
(a fixed length of the rollout's clock), the canary's traces and the production's are taken in arrival order
and grouped: `canary_group` canary traces against the next `production_group` production traces of the SAME
window (the sizes follow the configured share: 1 against 9 at 10%). One unit's difference is

    mean(canary group) − mean(production group),

which lies in [score_low − score_high, score_high − score_low] and whose expected value, given everything
before it, is the two versions' difference in that window. A level that drifts over the day moves both
sides of a unit alike (they come from the same window), so it cancels; traces left over when a window ends
are not used. The grouping looks at arms and times only, never at scores, so the units in the order they
complete are a sequence the betting confidence sequence of `analysis.sequential` can read at every poll.

`form_units` builds them from a whole rollout at once (vectorised, for simulations); `UnitBuilder` builds
the same units poll by poll, and its state is plain data a watch stores and resumes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoregate.analysis.sequential import SequentialInputError

__all__ = ["UnitBuilder", "Units", "form_units", "group_sizes"]


def group_sizes(share: float) -> tuple[int, int]:
    """Return (canary group, production group) sizes for a configured canary share in (0, 1)."""
    if not 0 < share < 1:
        raise SequentialInputError(f"canary share must be between 0 and 1, got {share!r}", where="share")
    return max(1, round(share / (1 - share))), max(1, round((1 - share) / share))


@dataclass(frozen=True)
class Units:
    """The units of a rollout in the order they completed: when each completed and its difference."""

    completed_at: np.ndarray
    difference: np.ndarray


def _groups(at: np.ndarray, window: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return (window, index, last time, sum) of each full group of `size` consecutive traces per window."""
    order = np.lexsort((at, window))
    w, t = window[order], at[order]
    starts = np.r_[0, np.flatnonzero(np.diff(w)) + 1]
    rank = np.arange(w.size) - np.repeat(starts, np.diff(np.r_[starts, w.size]))
    return w, rank // size, t, order


def form_units(at: np.ndarray, canary: np.ndarray, value: np.ndarray, *, window_s: float, share: float) -> Units:
    """Return the units of one rollout's scored traces (times in seconds, canary flags, scores), in completion order.

    The same units `UnitBuilder` makes when the traces come in time order.
    """
    at, canary, value = np.asarray(at, float), np.asarray(canary, bool), np.asarray(value, float)
    if not window_s > 0:
        raise SequentialInputError(f"window must be above 0 seconds, got {window_s!r}", where="window")
    kc, kp = group_sizes(share)
    window = np.floor(at / window_s).astype(np.int64)
    sides = []
    for flag, size in ((True, kc), (False, kp)):
        pick = canary == flag
        w, g, t, order = _groups(at[pick], window[pick], size)
        v = value[pick][order]
        keys, where = np.unique(np.stack([w, g], axis=1), axis=0, return_inverse=True)
        where = where.reshape(-1)
        count = np.bincount(where, minlength=len(keys))
        mean = np.bincount(where, weights=v, minlength=len(keys)) / np.maximum(count, 1)
        last = np.full(len(keys), -np.inf)
        np.maximum.at(last, where, t)
        full = count == size
        sides.append(
            {(int(a), int(b)): (m, lt) for (a, b), m, lt in zip(keys[full], mean[full], last[full], strict=True)}
        )
    common = sorted(set(sides[0]) & set(sides[1]))
    done = np.array([max(sides[0][k][1], sides[1][k][1]) for k in common], dtype=float)
    diff = np.array([sides[0][k][0] - sides[1][k][0] for k in common], dtype=float)
    order = np.argsort(done, kind="stable")
    return Units(done[order], diff[order])


@dataclass
class UnitBuilder:
    """Units made poll by poll: feed each poll's new scored traces; leftovers wait within their window."""

    window_s: float
    share: float
    differences: list[float] = field(default_factory=list)
    pending: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """Per window (its index as a string, for JSON), the canary's and production's scores not in a unit yet."""
    sizes: tuple[int, int] = field(init=False)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.window_s) and self.window_s > 0):
            raise SequentialInputError(f"window must be above 0 seconds, got {self.window_s!r}", where="window")
        self.sizes = group_sizes(self.share)

    def add(self, traces: list[tuple[float, bool, float]]) -> int:
        """Add (time s, is canary, score) traces in the order they came; return how many units they completed."""
        kc, kp = self.sizes
        before = len(self.differences)
        for at, is_canary, score in sorted(traces, key=lambda t: t[0]):
            key = str(math.floor(at / self.window_s))
            queue = self.pending.setdefault(key, {"canary": [], "production": []})
            queue["canary" if is_canary else "production"].append(float(score))
            if len(queue["canary"]) >= kc and len(queue["production"]) >= kp:
                c, p = queue["canary"][:kc], queue["production"][:kp]
                del queue["canary"][:kc], queue["production"][:kp]
                self.differences.append(sum(c) / kc - sum(p) / kp)
                if not (queue["canary"] or queue["production"]):
                    del self.pending[key]
        return len(self.differences) - before

    def to_dict(self) -> dict[str, Any]:
        """Return the state as plain data (JSON-ready)."""
        return {
            "window_s": self.window_s,
            "share": self.share,
            "differences": self.differences,
            "pending": self.pending,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UnitBuilder:
        """Return the builder `to_dict` described."""
        return cls(float(data["window_s"]), float(data["share"]), list(data["differences"]), dict(data["pending"]))
