"""A rollout watched poll by poll: the two-sample test, the sample-ratio check and the guardrails, one decision.

Pure, no I/O. After each poll: a broken split (the observed canary share's sequence excludes the configured
share) halts, it does not decide; a breached guardrail rolls back; otherwise the deciding metric's sequence
(`rollout_units`: canary − production within time windows) promotes when it lies wholly on the good side of
the threshold, rolls back when wholly on the bad side, and else the rollout continues. Every sequence keeps
its running intersection over polls, so reading after every poll costs no error: a wrong promote or roll
back between equal versions happens at most alpha of the time (alpha/2 each way; `bench/rollout_mc.py`).

`RolloutMonitor.to_dict` is everything a watch must keep to resume after it is killed; `settle_rollouts`
gives the same metric decisions for many simulated rollouts at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from scoregate.analysis.rollout_rules import RolloutRule
from scoregate.analysis.rollout_streams import CallFacts, GuardrailReading, GuardrailStream, Stream
from scoregate.analysis.rollout_units import UnitBuilder
from scoregate.analysis.sequential import crossings_at_counts

__all__ = ["Decision", "PollData", "RolloutMonitor", "RolloutReading", "settle_rollouts"]

Decision = Literal["promote", "rollback", "continue", "halt"]


@dataclass(frozen=True)
class PollData:
    """What one poll brought since the last: scored traces, newly seen assignment units, the canary's calls."""

    scored: list[tuple[float, bool, float]] = field(default_factory=list)
    """(trace time in seconds, served by the canary, the deciding metric's score), one per scored trace."""
    assigned: list[bool] = field(default_factory=list)
    """Per user or session first seen in this poll, in order: was it assigned to the canary."""
    canary_calls: list[CallFacts] = field(default_factory=list)


@dataclass(frozen=True)
class RolloutReading:
    """The rollout after a poll: the decision, why, and every figure behind it."""

    decision: Decision
    reason: str
    poll: int
    units: int
    lower: float | None
    upper: float | None
    """The 1 − alpha sequence for the difference canary − production of the deciding metric."""
    mean: float | None
    share: float | None
    share_lower: float | None
    share_upper: float | None
    assigned: int
    guardrails: tuple[GuardrailReading, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        from dataclasses import asdict

        return asdict(self)


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.1%}"


@dataclass
class RolloutMonitor:
    """One rollout's running state: feed each poll with `poll`, keep `to_dict` to resume."""

    rule: RolloutRule
    units: UnitBuilder
    metric: Stream
    split: Stream
    guards: list[GuardrailStream]
    polls: int = 0

    @classmethod
    def start(cls, rule: RolloutRule) -> RolloutMonitor:
        """Return the monitor of a rollout that has seen nothing yet."""
        return cls(
            rule, UnitBuilder(rule.window_s, rule.share), Stream(rule.lo, rule.hi, rule.alpha),
            Stream(0.0, 1.0, rule.srm_alpha), [GuardrailStream.start(g, rule.guardrail_alpha) for g in rule.guardrails],
        )  # fmt: skip

    def poll(self, data: PollData) -> RolloutReading:
        """Add one poll's data and return the decision after it."""
        self.polls += 1
        before = len(self.units.differences)
        self.units.add(data.scored)
        self.metric.add(self.units.differences[before:])
        self.split.add([float(a) for a in data.assigned])
        guards = tuple(g.add(data.canary_calls) for g in self.guards)
        decision, reason = self._decide(guards)
        m, s = self.metric, self.split
        return RolloutReading(
            decision, reason, self.polls, m.n, m.lower, m.upper, m.mean, s.mean, s.lower, s.upper, s.n, guards
        )

    def _decide(self, guards: tuple[GuardrailReading, ...]) -> tuple[Decision, str]:
        rule, split = self.rule, self.split
        if split.excludes(rule.share):
            return "halt", (
                f"sample ratio mismatch: {_pct(split.mean)} of {split.n} users or sessions went to the canary "
                f"(sequence [{_pct(split.lower)}, {_pct(split.upper)}]), configured {_pct(rule.share)}"
            )
        for g in guards:
            if g.breached:
                return "rollback", f"guardrail {g.name} breached: limit {g.limit:g}, observed {g.observed:.4g}"
        m, a = self.metric, rule.threshold + 0.0  # never "-0"
        if m.lower is None or m.upper is None:
            return "continue", "no unit of canary and production scores yet"
        good = m.lower > a if rule.direction == "higher" else m.upper < a
        bad = m.upper < a if rule.direction == "higher" else m.lower > a
        where = f"[{m.lower:.4g}, {m.upper:.4g}] over {m.n} units"
        if good:
            word = "better" if rule.question == "better" else "non-inferior"
            return "promote", f"the canary is {word}: difference {where}, threshold {a:g}"
        if bad:
            word = "worse" if rule.question == "better" else "inferior"
            return "rollback", f"the canary is {word}: difference {where}, threshold {a:g}"
        return "continue", f"not settled: difference {where} holds the threshold {a:g}"

    def to_dict(self) -> dict[str, Any]:
        """Return everything needed to resume (JSON-ready)."""
        return {
            "rule": self.rule.to_dict(), "units": self.units.to_dict(), "metric": self.metric.to_dict(),
            "split": self.split.to_dict(), "guards": [g.to_dict() for g in self.guards], "polls": self.polls,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutMonitor:
        """Return the monitor `to_dict` described."""
        return cls(
            RolloutRule.from_dict(data["rule"]), UnitBuilder.from_dict(data["units"]), Stream.from_dict(data["metric"]),
            Stream.from_dict(data["split"]), [GuardrailStream.from_dict(g) for g in data["guards"]], int(data["polls"]),
        )  # fmt: skip


def settle_rollouts(differences: np.ndarray, counts: np.ndarray, rule: RolloutRule) -> tuple[np.ndarray, np.ndarray]:
    """Return (poll index, decision) of each simulated rollout's first promote or roll back on the metric alone.

    `differences` is rollouts × units (padded past each rollout's units), `counts` rollouts × polls (units by each
    poll). The poll index is −1 and the decision "continue" where none settled. The same decisions as
    `RolloutMonitor` up to the bisection's 2⁻⁴⁴ of the range.
    """
    above, below = crossings_at_counts(
        differences, rule.threshold, lo=rule.lo, hi=rule.hi, alpha=rule.alpha, counts=counts
    )
    good, bad = (above, below) if rule.direction == "higher" else (below, above)
    settled = good | bad
    rows = np.arange(differences.shape[0])
    first = np.argmax(settled, axis=1)
    hit = settled[rows, first]
    words = np.where(~hit, "continue", np.where(good[rows, first], "promote", "rollback"))
    return np.where(hit, first, -1), words
