"""What a rollout decides on and when: the deciding metric's question, the share, the SRM check, the guardrails.

Pure dataclasses, validated when built; a bad field is a `SequentialInputError` naming it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from scoregate.analysis.sequential import SequentialInputError, check_alpha
from scoregate.analysis.sequential_stop import StopRule

__all__ = ["GUARDRAILS", "Guardrail", "RolloutRule"]

GuardrailName = Literal["error_rate", "p95_latency_ms", "cost_per_call_usd"]

GUARDRAILS: dict[str, str] = {
    "error_rate": "share of the canary's calls that failed",
    "p95_latency_ms": "95th percentile of the canary's latency, in milliseconds",
    "cost_per_call_usd": "mean cost of one canary call, in US dollars",
}
"""Each guardrail the rules may name, in words."""


@dataclass(frozen=True)
class Guardrail:
    """A limit the canary must not be shown to exceed; a breach rolls the rollout back."""

    name: GuardrailName
    limit: float

    def __post_init__(self) -> None:
        if self.name not in GUARDRAILS:
            raise SequentialInputError(
                f"unknown guardrail {self.name!r}; choose one of {', '.join(GUARDRAILS)}", where="guardrails"
            )
        if not (math.isfinite(self.limit) and self.limit > 0):
            raise SequentialInputError(f"limit must be above 0, got {self.limit!r}", where=f"guardrails.{self.name}")
        if self.name == "error_rate" and self.limit >= 1:
            raise SequentialInputError(f"an error rate limit is below 1, got {self.limit!r}", where="guardrails")


@dataclass(frozen=True)
class RolloutRule:
    """The rollout's deciding metric (its range and question), canary share, windows, checks and levels."""

    lo: float
    hi: float
    """Range of one unit's difference: [score_low − score_high, score_high − score_low]."""
    share: float
    """Configured canary share, in (0, 1)."""
    question: Literal["better", "non-inferior"] = "non-inferior"
    margin: float = 0.0
    direction: Literal["higher", "lower"] = "higher"
    alpha: float = 0.05
    """Wrong promote or roll back, together, at most alpha (alpha/2 each), however often it is read."""
    window_s: float = 3600.0
    srm_alpha: float = 0.001
    guardrails: tuple[Guardrail, ...] = ()
    guardrail_alpha: float = 0.05

    def __post_init__(self) -> None:
        self.stop_rule()  # the question, margin, direction, range and alpha, checked as stop-early checks them
        if not 0 < self.share < 1:
            raise SequentialInputError(f"canary share must be between 0% and 100%, got {self.share!r}", where="share")
        if not (math.isfinite(self.window_s) and self.window_s > 0):
            raise SequentialInputError(f"window must be above 0 seconds, got {self.window_s!r}", where="window")
        check_alpha(self.srm_alpha)
        check_alpha(self.guardrail_alpha)
        names = [g.name for g in self.guardrails]
        if len(set(names)) != len(names):
            raise SequentialInputError("a guardrail is named twice", where="guardrails")

    def stop_rule(self) -> StopRule:
        """Return the deciding metric's rule as the stop-early rule (same question, margin, direction, range)."""
        return StopRule(
            lo=self.lo, hi=self.hi, question=self.question, margin=self.margin, direction=self.direction,
            alpha=self.alpha, method="betting",
        )  # fmt: skip

    @property
    def threshold(self) -> float:
        """The difference the sequence must exclude: 0, or −margin (+margin when lower is better)."""
        return self.stop_rule().threshold

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form (JSON-ready)."""
        return {**asdict(self), "guardrails": [asdict(g) for g in self.guardrails]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutRule:
        """Return the rule `to_dict` described."""
        guards = tuple(Guardrail(g["name"], float(g["limit"])) for g in data.get("guardrails", ()))
        return cls(**{**data, "guardrails": guards})
