"""Simulated rollout traffic: scored traces of a canary and production over days that drift, for the rollout checks.

Shared by tests/analysis/test_rollout_stats.py and bench/rollout_mc.py. Traces arrive as a Poisson process whose
rate follows the day (busy afternoons, quiet nights); each goes to the canary with probability `served_share`
(the configured share, or another when the split is broken). Its 0/1 score (a pass/fail judge) passes with a
probability that drifts over the day for both versions alike, plus `effect` for the canary. `scored_share`
thins the production traces that get a score (judges sampling one version less): the case where grouping in
arrival order without time windows pairs a canary trace with production traces from hours earlier.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoregate.analysis.rollout_units import form_units
from scoregate.support.canary_assignment import canary_label

HOUR = 3600.0


@dataclass(frozen=True)
class Traffic:
    """How one simulated rollout's traces come and score."""

    hours: float = 48.0
    traces_per_hour: float = 60.0
    served_share: float = 0.10
    effect: float = 0.0
    """Canary pass rate − production pass rate, at every hour."""
    base: float = 0.70
    drift: float = 0.0
    """Amplitude of the day's swing of both versions' pass rate (0.2: 0.5 at night, 0.9 in the afternoon)."""
    scored_share: float = 1.0
    """Share of the production traces that get a score (the canary's all do)."""

    def pass_rate(self, t: np.ndarray) -> np.ndarray:
        """Production's pass rate at times t (seconds)."""
        return self.base + self.drift * np.sin(2 * np.pi * (t / HOUR - 9) / 24)

    def arrivals(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Return one rollout's served traces: times (s, sorted) and canary flags."""
        peak = self.traces_per_hour * 1.5
        t = np.sort(rng.uniform(0, self.hours * HOUR, rng.poisson(peak * self.hours)))
        t = t[rng.random(t.size) < (1 + 0.5 * np.sin(2 * np.pi * (t / HOUR - 9) / 24)) / 1.5]  # the day's rate
        return t, rng.random(t.size) < self.served_share

    def scores(self, rng: np.random.Generator, t: np.ndarray, canary: np.ndarray) -> tuple[np.ndarray, ...]:
        """Return the scored traces among the served ones: times, canary flags, 0/1 scores."""
        rate = np.clip(self.pass_rate(t) + np.where(canary, self.effect, 0.0), 0, 1)
        score = (rng.random(t.size) < rate).astype(float)
        scored = canary | (rng.random(t.size) < self.scored_share)
        return t[scored], canary[scored], score[scored]

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """Return one rollout's scored traces: times (s, sorted), canary flags, scores."""
        return self.scores(rng, *self.arrivals(rng))


@dataclass(frozen=True)
class SimulatedRollouts:
    """Many simulated rollouts as the watch would see them at each poll."""

    differences: np.ndarray
    """runs × units, padded past each rollout's units."""
    counts: np.ndarray
    """runs × polls: units complete by each poll."""
    served: np.ndarray
    """runs × polls: traces served (both versions) by each poll."""
    canary: np.ndarray
    """runs × traces, padded with the configured share's side (False): each served trace's arm, in order."""
    polls: np.ndarray
    """The polls' times (s)."""


def simulate(
    traffic: Traffic, runs: int, seed: int, *, share: float, window_s: float, poll_s: float
) -> SimulatedRollouts:
    """Return `runs` rollouts of `traffic`, their units made as the watch makes them, read every `poll_s`."""
    rng = np.random.default_rng(seed)
    polls = np.arange(poll_s, traffic.hours * HOUR + poll_s / 2, poll_s)
    rows, arms = [], []
    counts, served = np.zeros((runs, polls.size), dtype=int), np.zeros((runs, polls.size), dtype=int)
    for r in range(runs):
        t, canary = traffic.arrivals(rng)
        units = form_units(*traffic.scores(rng, t, canary), window_s=window_s, share=share)
        rows.append(units.difference)
        arms.append(canary)
        counts[r] = np.searchsorted(units.completed_at, polls, side="right")
        served[r] = np.searchsorted(t, polls, side="right")
    return SimulatedRollouts(_padded(rows, 0.0), counts, served, _padded(arms, False).astype(bool), polls)


def _padded(rows: list[np.ndarray], fill: float) -> np.ndarray:
    out = np.full((len(rows), max(1, max(row.size for row in rows))), fill, dtype=float)
    for r, row in enumerate(rows):
        out[r, : row.size] = row
    return out


def simulated_units(
    traffic: Traffic, runs: int, seed: int, *, share: float, window_s: float, poll_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return (differences padded, counts): runs × units and runs × polls (units complete by each poll)."""
    sim = simulate(traffic, runs, seed, share=share, window_s=window_s, poll_s=poll_s)
    return sim.differences, sim.counts


def live_scores(
    path: Path,
    *,
    hours: float = 72,
    effect: float = 0.0,
    served: float | None = None,
    seed: int = 1,
    prompt: str = "summarization-catchup",
) -> Path:
    """Write what an app would log for a rollout of v2 against v1: one trace a session (60 an hour), its version from
    the sticky split at 10% (or a broken split: `served`), a 0/1 score passing 70% of the time (+ `effect` on v2)."""
    rng = np.random.default_rng(seed)
    lines = []
    for i, t in enumerate(np.sort(rng.uniform(0, hours * 3600, int(hours * 60)))):
        session = f"session-{seed}-{i}"
        canary = canary_label(session, 0.10, salt=prompt) == "canary" if served is None else rng.random() < served
        passed = rng.random() < 0.7 + (effect if canary else 0.0)
        lines.append(json.dumps({"time": 1_700_000_000 + float(t), "version": 2 if canary else 1, "session": session,
                                 "score": float(passed), "error": False, "latency_ms": 800.0}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
