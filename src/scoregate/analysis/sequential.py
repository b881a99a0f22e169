"""Stop early, validly: an anytime-valid confidence sequence for a paired mean difference (the rule: `sequential_stop`).

Pure statistics, no I/O. Each item's difference d = candidate − reference of the primary score lies in a
declared range [lo, hi] (a score on [a, b] gives [a − b, b − a]); it is mapped to x = (d − lo)/(hi − lo) in
[0, 1] and the sequence for the mean of x is mapped back. Both methods are from Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", J. R. Stat. Soc. B 86(1):1–27 (discussion paper
read 2023, printed 2024; arXiv:2010.09686), with their predictable plug-ins (μ̂₀ = 1/2, σ̂²₀ = 1/4):

    μ̂_t = (1/2 + Σ_{i≤t} x_i)/(t + 1),   σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²)/(t + 1),
    λ̇_t = sqrt(2 log(2/α) / (σ̂²_{t−1} · t · log(1 + t)))      (uses items 1..t−1 only: predictable).

- "betting" (default): the hedged capital process of Theorem 3, θ = 1/2, bets truncated at c = 1/2:
  K⁺_t(m) = Π (1 + min(λ̇_i, c/m)(x_i − m)), K⁻_t(m) = Π (1 − min(λ̇_i, c/(1 − m))(x_i − m)), and
  C_t = {m : max(θK⁺_t(m), (1 − θ)K⁻_t(m)) < 1/α}. K⁺ falls and K⁻ rises in m, so C_t is an interval; its ends
  are found by bisection (44 halvings of [0, 1], the excluded side kept, so the printed interval is never
  narrower than C_t). O(t) per look.
- "empirical-bernstein": the predictable plug-in empirical-Bernstein CS of Theorem 2 ("PrPl-EB"), closed form,
  O(n) for every t at once: λ_t = min(λ̇_t, c), v_t = 4(x_t − μ̂_{t−1})², ψ_E(λ) = (−log(1 − λ) − λ)/4,
  C_t = Σλ_i x_i / Σλ_i ± (log(2/α) + Σ v_i ψ_E(λ_i)) / Σλ_i.

Either way P(∃t: μ ∉ C_t) ≤ α (Ville's inequality) when each difference has mean μ given the ones before —
items drawn independently from the population of items, run in a seeded random order (`item_order`). The
target μ is that population's mean difference, the same quantity a full run's bootstrap CI estimates. The
sequence is read at the looks (batch ends) and the running intersection over looks is kept.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "METHODS", "Method", "SequenceBounds", "SequentialInputError", "check_alpha", "check_differences", "check_looks",
    "check_range", "confidence_sequence", "crossings", "crossings_at_counts", "difference_range", "item_order",
]  # fmt: skip

Method = Literal["betting", "empirical-bernstein"]

METHODS: dict[str, str] = {
    "betting": "hedged betting confidence sequence with predictable plug-in bets "
    "(Waudby-Smith & Ramdas 2023, JRSS-B, Theorem 3; θ = 1/2, c = 1/2)",
    "empirical-bernstein": "predictable plug-in empirical-Bernstein confidence sequence "
    "(Waudby-Smith & Ramdas 2023, JRSS-B, Theorem 2; c = 1/2)",
}
_C = 0.5
_BISECTIONS = 44
_CHUNK = 1_000_000


class SequentialInputError(ValueError):
    """Bad input to the sequential analysis; `where` names the item or field, `hint` says what to do."""

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.message, self.where, self.hint = message, where, hint


def difference_range(score_low: float, score_high: float) -> tuple[float, float]:
    """Return the range of candidate − reference for a score declared on [score_low, score_high]."""
    if not (math.isfinite(score_low) and math.isfinite(score_high)) or score_low > score_high:
        raise SequentialInputError(f"score range [{score_low:g}, {score_high:g}] is not a finite [min, max]")
    return score_low - score_high, score_high - score_low


def item_order(item_ids: Sequence[str], seed: int) -> list[str]:
    """Return the ids in the fixed pseudo-random order a stop-early run executes them (same seed, same order).

    Each id is ranked by SHA-256 of (seed, id): the order does not depend on the dataset's order, numpy's
    version or the platform, and adding or removing an item leaves the others' relative order unchanged.
    """
    if not item_ids:
        raise SequentialInputError("no items to order")
    if len(set(item_ids)) != len(item_ids):
        dup = next(i for i, k in Counter(item_ids).items() if k > 1)
        raise SequentialInputError(f"item id {dup!r} appears more than once", hint="give every item its own id")
    return sorted(item_ids, key=lambda i: hashlib.sha256(f"{seed}\x00{i}".encode()).digest())


def check_alpha(alpha: float) -> None:
    """Raise unless 0 < alpha < 1."""
    if not 0 < alpha < 1:
        raise SequentialInputError(f"alpha must be in (0, 1), got {alpha!r}", where="alpha")


def check_range(lo: float, hi: float) -> None:
    """Raise unless [lo, hi] is a finite range (lo == hi allowed: every difference is then that value)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise SequentialInputError(f"difference range [{lo!r}, {hi!r}] is not a finite [low, high]", where="range")


def check_differences(
    values: Any, lo: float, hi: float, *, offset: int = 0, item_ids: Sequence[str] | None = None
) -> np.ndarray:
    """Return the differences as floats (clipped to [lo, hi] within rounding); else name the first bad one.

    `offset` counts the differences before these, so a batch's bad value is named by its place in the run.
    """
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size == 0:
        raise SequentialInputError("no differences: the sequence needs at least one item measured on both sides")
    if item_ids is not None and len(item_ids) != arr.size:
        raise SequentialInputError(f"{len(item_ids)} item ids for {arr.size} differences")
    tol = 1e-9 * max(1.0, hi - lo)
    bad = ~np.isfinite(arr) | (arr < lo - tol) | (arr > hi + tol)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"item {item_ids[i]!r}" if item_ids is not None else f"difference #{offset + i + 1}"
        problem = "is not a number" if not math.isfinite(arr[i]) else f"is outside the declared range [{lo:g}, {hi:g}]"
        raise SequentialInputError(
            f"difference {float(arr[i]):g} {problem}",
            where=where,
            hint="drop items missing on either side; check the score's declared range",
        )
    return np.clip(arr, lo, hi)


def _plugins(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (λ̇_t, μ̂_{t−1}) for every t along the last axis: each uses the items before t only."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    mu_prev = np.concatenate([np.full((*x.shape[:-1], 1), 0.5), mu[..., :-1]], axis=-1)
    s2_prev = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), s2[..., :-1]], axis=-1)
    return np.sqrt(2 * math.log(2 / alpha) / (s2_prev * t * np.log1p(t))), mu_prev


def _eb_bounds(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Return PrPl-EB bounds (scaled, clipped to [0, 1]) at every t along the last axis."""
    lam_dot, mu_prev = _plugins(x, alpha)
    lam = np.minimum(lam_dot, _C)
    psi = (-np.log1p(-lam) - lam) / 4
    sum_lam = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / sum_lam
    radius = (math.log(2 / alpha) + np.cumsum(4 * (x - mu_prev) ** 2 * psi, axis=-1)) / sum_lam
    return np.clip(centre - radius, 0.0, 1.0), np.clip(centre + radius, 0.0, 1.0)


def _log_capital_up(x: np.ndarray, lam_dot: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Return log K⁺(m) summed over the last axis; m broadcasts against x's leading axes plus one."""
    with np.errstate(divide="ignore"):
        cap = np.where(m > 0, _C / np.maximum(m, 1e-300), np.inf)
    return np.sum(np.log1p(np.minimum(lam_dot, cap) * (x - m)), axis=-1)


def _betting_lower(x: np.ndarray, lam_dot: np.ndarray, looks: np.ndarray, alpha: float) -> np.ndarray:
    """Return the hedged CS's lower end (scaled) at each look of the 1-D x, by bisection on K⁺."""
    threshold = math.log(2 / alpha)  # θK⁺ ≥ 1/α with θ = 1/2
    out = np.empty(len(looks))
    per_chunk = max(1, _CHUNK // int(looks[-1]))
    for start in range(0, len(looks), per_chunk):
        ts = looks[start : start + per_chunk]
        width = int(ts[-1])
        mask = np.arange(width)[None, :] < ts[:, None]
        xs = np.where(mask, x[None, :width], 0.0)
        ls = np.where(mask, lam_dot[None, :width], 0.0)  # a bet of 0 past t leaves the capital as it was
        low, high = np.zeros(len(ts)), np.ones(len(ts))
        excluded = _log_capital_up(xs, ls, low[:, None]) >= threshold
        for _ in range(_BISECTIONS):
            mid = (low + high) / 2
            hit = _log_capital_up(xs, ls, mid[:, None]) >= threshold
            low, high = np.where(hit, mid, low), np.where(hit, high, mid)
        out[start : start + len(ts)] = np.where(excluded, low, 0.0)
    return out


def _scaled_bounds(x: np.ndarray, looks: np.ndarray, alpha: float, method: Method) -> tuple[np.ndarray, np.ndarray]:
    """Return running-intersection bounds (scaled) of the 1-D x at the looks."""
    if method == "empirical-bernstein":
        lower, upper = _eb_bounds(x, alpha)
        lower, upper = lower[looks - 1], upper[looks - 1]
    else:
        lower = _betting_lower(x, _plugins(x, alpha)[0], looks, alpha)
        upper = 1.0 - _betting_lower(1.0 - x, _plugins(1.0 - x, alpha)[0], looks, alpha)
    return np.maximum.accumulate(lower), np.minimum.accumulate(upper)


@dataclass(frozen=True)
class SequenceBounds:
    """The confidence sequence read at each look (item counts), in the differences' units."""

    method: Method
    alpha: float
    lo: float
    hi: float
    looks: tuple[int, ...]
    lower: tuple[float, ...]
    """Running intersection: the largest lower bound of any look so far."""
    upper: tuple[float, ...]
    mean: float
    """Plain mean of the n differences (shown beside the bounds; the sequence is not centred on it)."""

    @property
    def n(self) -> int:
        """Items behind the last look."""
        return self.looks[-1]

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return asdict(self)


def check_looks(looks: Sequence[int] | None, n: int) -> np.ndarray:
    """Return the looks as an int array (default: after every item); raise unless increasing from 1 up to n."""
    arr = np.arange(1, n + 1) if looks is None else np.asarray(looks, dtype=int).reshape(-1)
    if arr.size == 0 or arr[0] < 1 or arr[-1] != n or np.any(np.diff(arr) <= 0):
        raise SequentialInputError(f"looks must be increasing item counts from 1 ending at n = {n}", where="looks")
    return arr


def confidence_sequence(
    differences: Sequence[float] | np.ndarray,
    *,
    lo: float,
    hi: float,
    alpha: float = 0.05,
    method: Method = "betting",
    looks: Sequence[int] | None = None,
    item_ids: Sequence[str] | None = None,
) -> SequenceBounds:
    """Return the 1 − alpha confidence sequence for the mean of `differences` (in run order) at `looks`.

    `looks` are the item counts after which it is read (default: after every item); the last must be n.
    "betting" costs O(n) per look (pass batch ends for long sequences); "empirical-bernstein" is O(n) for all.
    """
    check_alpha(alpha)
    check_range(lo, hi)
    if method not in METHODS:
        raise SequentialInputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}", where="method")
    d = check_differences(differences, lo, hi, item_ids=item_ids)
    at = check_looks(looks, d.size)
    if hi == lo:
        lower, upper = np.full(at.size, lo), np.full(at.size, lo)
    else:
        sl, su = _scaled_bounds((d - lo) / (hi - lo), at, alpha, method)
        lower, upper = lo + sl * (hi - lo), lo + su * (hi - lo)
    return SequenceBounds(
        method, alpha, lo, hi, tuple(int(t) for t in at), tuple(map(float, lower)), tuple(map(float, upper)),
        float(d.mean()),
    )  # fmt: skip


def crossings(
    differences: np.ndarray,
    threshold: float,
    *,
    lo: float,
    hi: float,
    alpha: float = 0.05,
    method: Method = "betting",
    looks: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return (above, below): per run (row) and look, whether the running sequence lies above / below threshold.

    Vectorised over runs × items, for simulations. "betting" asks whether K± at the threshold has reached
    2/α: the same answer as the bisected bounds of `confidence_sequence` up to 2⁻⁴⁴ of the range.
    """
    check_alpha(alpha)
    check_range(lo, hi)
    if method not in METHODS:
        raise SequentialInputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}", where="method")
    d = np.asarray(differences, dtype=float)
    if d.ndim != 2 or d.shape[1] == 0:
        raise SequentialInputError("differences must be a runs × items array with at least one item")
    check_differences(d, lo, hi)
    at = check_looks(looks, d.shape[1])
    shape = (d.shape[0], at.size)
    if hi == lo:
        return np.full(shape, lo > threshold), np.full(shape, lo < threshold)
    x, a = (np.clip(d, lo, hi) - lo) / (hi - lo), (threshold - lo) / (hi - lo)
    if method == "empirical-bernstein":
        lower, upper = _eb_bounds(x, alpha)
        above = np.maximum.accumulate(lower[:, at - 1], axis=1) > a
        return above, np.minimum.accumulate(upper[:, at - 1], axis=1) < a
    return _excluded_up_to(x, a, at, alpha), _excluded_up_to(1 - x, 1 - a, at, alpha)


def _excluded_up_to(x: np.ndarray, m: float, looks: np.ndarray, alpha: float) -> np.ndarray:
    """Return, per row and look, whether the hedged sequence has excluded every value ≤ m (scaled) by then."""
    if m < 0 or m >= 1:
        return np.full((x.shape[0], looks.size), m < 0)
    lam_dot = _plugins(x, alpha)[0]
    lam = lam_dot if m == 0 else np.minimum(lam_dot, _C / m)
    log_k = np.cumsum(np.log1p(lam * (x - m)), axis=1)[:, looks - 1]
    return np.logical_or.accumulate(log_k >= math.log(2 / alpha), axis=1)


def crossings_at_counts(
    differences: np.ndarray, threshold: float, *, lo: float, hi: float, alpha: float, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return (above, below) as `crossings` does (betting), each run read at its own item counts.

    `counts` is runs × looks: how many of the run's differences had come by each look (0 allowed: none yet;
    never decreasing). A run's values past its last count are never read (pad them with any value in range).
    """
    check_alpha(alpha)
    check_range(lo, hi)
    d, at = np.asarray(differences, dtype=float), np.asarray(counts, dtype=int)
    if d.ndim != 2 or at.ndim != 2 or at.shape[0] != d.shape[0]:
        raise SequentialInputError("differences and counts must be runs × items and runs × looks", where="counts")
    if at.size and (at.min() < 0 or at.max() > d.shape[1] or np.any(np.diff(at, axis=1) < 0)):
        raise SequentialInputError(f"counts must be never decreasing, from 0 to {d.shape[1]}", where="counts")
    check_differences(d, lo, hi)
    if hi == lo:
        return np.broadcast_to(lo > threshold, at.shape).copy(), np.broadcast_to(lo < threshold, at.shape).copy()
    x, a = (np.clip(d, lo, hi) - lo) / (hi - lo), (threshold - lo) / (hi - lo)
    return _excluded_at(x, a, at, alpha), _excluded_at(1 - x, 1 - a, at, alpha)


def _excluded_at(x: np.ndarray, m: float, counts: np.ndarray, alpha: float) -> np.ndarray:
    """Return, per row and look, whether the hedged sequence read at the row's counts has excluded every value ≤ m."""
    if m < 0 or m >= 1:
        return np.full(counts.shape, m < 0)
    lam_dot = _plugins(x, alpha)[0]
    lam = lam_dot if m == 0 else np.minimum(lam_dot, _C / m)
    log_k = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(np.log1p(lam * (x - m)), axis=1)], axis=1)
    return np.logical_or.accumulate(np.take_along_axis(log_k, counts, axis=1) >= math.log(2 / alpha), axis=1)
