"""Simulated paired scores (candidate, reference) with a known true mean difference, for the stop-early checks.

Shared by tests/analysis/test_sequential.py and bench/sequential.py. Each shape gives the per-item difference
candidate − reference for `runs` simulated comparisons of `items` items, and its exact mean and standard
deviation, so an effect of "0.5 standard deviations" is d_z = mean / sd of the paired difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

JUDGE_SCALE = np.arange(1, 6, dtype=float)
JUDGE_MARGINAL = np.array([0.10, 0.15, 0.30, 0.30, 0.15])
"""A 1–5 judge's reference scores: most items 3–4, few at the ends."""


@dataclass(frozen=True)
class PairedShape:
    """A distribution of paired differences: its exact moments and a sampler."""

    name: str
    lo: float
    hi: float
    mean: float
    sd: float
    values: np.ndarray
    probs: np.ndarray
    """The difference takes `values[k]` with probability `probs[k]` (independently per item)."""

    @property
    def dz(self) -> float:
        """Standardised effect: mean / sd of the paired difference."""
        return self.mean / self.sd

    def sample(self, rng: np.random.Generator, runs: int, items: int) -> np.ndarray:
        """Return runs × items differences."""
        return self.values[rng.choice(self.values.size, size=(runs, items), p=self.probs)]


def _shape(name: str, lo: float, hi: float, joint: dict[float, float]) -> PairedShape:
    values = np.array(sorted(joint))
    probs = np.array([joint[v] for v in values])
    probs = probs / probs.sum()
    mean = float(values @ probs)
    return PairedShape(name, lo, hi, mean, float(np.sqrt(values**2 @ probs - mean**2)), values, probs)


def judge_shape(tilt: float, *, redrawn: float = 0.6) -> PairedShape:
    """1–5 judge scores: the candidate keeps the reference's score, or (with prob `redrawn`) is redrawn.

    The redraw comes from the reference marginal tilted by exp(tilt · score): tilt 0 is no true difference
    (the pair is exchangeable, correlation 1 − redrawn), tilt > 0 favours the candidate.
    """
    tilted = JUDGE_MARGINAL * np.exp(tilt * JUDGE_SCALE)
    tilted /= tilted.sum()
    joint: dict[float, float] = {}
    for r, pr in zip(JUDGE_SCALE, JUDGE_MARGINAL, strict=True):
        for c, pc in zip(JUDGE_SCALE, tilted, strict=True):
            p = pr * (redrawn * pc + (1 - redrawn) * (c == r))
            joint[c - r] = joint.get(c - r, 0.0) + p
    return _shape(f"judge 1-5 (tilt {tilt:.4f})", -4.0, 4.0, joint)


def binary_shape(dz: float, *, discordant: float = 0.3) -> PairedShape:
    """0/1 scores: a `discordant` share of items pass on one side only; d_z sets which side more often."""
    mean = dz * np.sqrt(discordant / (1 + dz**2))
    if mean > discordant:
        raise ValueError(f"d_z {dz:g} needs more than {discordant:.0%} discordant items")
    return _shape(
        f"0/1 (d_z {dz:g})",
        -1.0,
        1.0,
        {1.0: (discordant + mean) / 2, -1.0: (discordant - mean) / 2, 0.0: 1 - discordant},
    )


def judge_with_dz(dz: float, *, redrawn: float = 0.6) -> PairedShape:
    """Return the 1–5 judge shape whose d_z equals `dz` (bisection on the tilt)."""
    return _solve(lambda t: judge_shape(t, redrawn=redrawn), lambda s: s.dz, dz)


def judge_with_mean(mean: float, *, redrawn: float = 0.6) -> PairedShape:
    """Return the 1–5 judge shape whose true mean difference equals `mean`."""
    return _solve(lambda t: judge_shape(t, redrawn=redrawn), lambda s: s.mean, mean)


def _solve(make: Callable[[float], PairedShape], measure: Callable[[PairedShape], float], target: float) -> PairedShape:
    low, high = -20.0, 20.0
    for _ in range(200):
        mid = (low + high) / 2
        if measure(make(mid)) < target:
            low = mid
        else:
            high = mid
    return make((low + high) / 2)


def latent_shape(name: str, levels: np.ndarray, marginal: np.ndarray, *, rho: float, shift: float) -> PairedShape:
    """Scores cut from correlated normals: reference Z₁, candidate Z₂ + shift, corr(Z₁, Z₂) = rho.

    Both land on `levels` with `marginal` probabilities when shift is 0 (then the pair is exchangeable, so the
    true mean difference is 0). Each cell's probability is integrated over Z₁ within the reference's bin
    (Simpson, 2,001 points per bin, tails past ±9 dropped): no sampling.
    """
    from scipy.integrate import simpson
    from scipy.stats import norm

    edges = np.concatenate([[-9.0], norm.ppf(np.cumsum(marginal)[:-1]), [9.0]])
    spread = np.sqrt(1 - rho**2)
    joint: dict[float, float] = {}
    for i, r in enumerate(levels):
        z = np.linspace(edges[i], edges[i + 1], 2001)
        for j, c in enumerate(levels):  # the candidate lands on level j: Z₂ + shift within bin j
            top = np.inf if j == len(levels) - 1 else edges[j + 1]
            bottom = -np.inf if j == 0 else edges[j]
            inside = norm.cdf((top - shift - rho * z) / spread) - norm.cdf((bottom - shift - rho * z) / spread)
            p = float(simpson(norm.pdf(z) * inside, x=z))
            joint[float(c - r)] = joint.get(float(c - r), 0.0) + p
    span = float(levels[-1] - levels[0])
    return _shape(name, -span, span, joint)
