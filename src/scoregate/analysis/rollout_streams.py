"""Bounded values read by the betting confidence sequence after each poll: the SRM check and the guardrails.

Pure, no I/O. A `Stream` keeps its values in arrival order and the running intersection of the sequence
read after each poll, so its error rate holds however often it is read (`analysis.sequential`).

- Sample ratio: each assignment unit (a user or session, first seen) is canary (1) or production (0); under
  the configured split their mean is the share. The split is broken when the sequence excludes the share.
- Guardrails, on the canary's calls: the error rate (0/1 per call) is breached when the sequence's lower end
  is above its limit; the p95 latency when the share of calls slower than the limit is shown above 5%; the
  cost per call when the mean cost is shown above its limit (costs clipped at 4× the limit, which only
  lowers the mean, so the lower end stays valid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoregate.analysis.rollout_rules import Guardrail
from scoregate.analysis.sequential import confidence_sequence

__all__ = ["CallFacts", "GuardrailReading", "GuardrailStream", "Stream"]

_P95_TAIL = 0.05
_COST_CLIP = 4.0


@dataclass
class Stream:
    """Values on [lo, hi] in arrival order and the running 1 − alpha sequence for their mean, read per poll."""

    lo: float
    hi: float
    alpha: float
    values: list[float] = field(default_factory=list)
    lower: float | None = None
    upper: float | None = None

    def add(self, values: list[float]) -> None:
        """Add one poll's values (none is fine: the bounds stay) and read the sequence at the new count."""
        self.values.extend(float(v) for v in values)
        if not values:
            return
        cs = confidence_sequence(
            np.array(self.values), lo=self.lo, hi=self.hi, alpha=self.alpha, looks=[len(self.values)]
        )
        self.lower = cs.lower[-1] if self.lower is None else max(self.lower, cs.lower[-1])
        self.upper = cs.upper[-1] if self.upper is None else min(self.upper, cs.upper[-1])

    @property
    def n(self) -> int:
        """Values so far."""
        return len(self.values)

    @property
    def mean(self) -> float | None:
        """Plain mean of the values so far (None before any)."""
        return float(np.mean(self.values)) if self.values else None

    def excludes(self, value: float) -> bool:
        """Whether the running sequence lies wholly above or wholly below `value`."""
        return self.lower is not None and self.upper is not None and (self.lower > value or self.upper < value)

    def to_dict(self) -> dict[str, Any]:
        """Return the state as plain data (JSON-ready)."""
        return {"lo": self.lo, "hi": self.hi, "alpha": self.alpha, "values": self.values,
                "lower": self.lower, "upper": self.upper}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stream:
        """Return the stream `to_dict` described."""
        return cls(**{**data, "values": [float(v) for v in data["values"]]})


@dataclass(frozen=True)
class CallFacts:
    """One canary call's telemetry: whether it failed, its latency and cost when known."""

    error: bool
    latency_ms: float | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class GuardrailReading:
    """A guardrail after a poll: calls seen, the observed figure, the sequence's ends, and whether it is breached."""

    name: str
    limit: float
    calls: int
    observed: float | None
    """Error rate, p95 latency (ms) or mean cost of the calls seen."""
    lower: float | None
    upper: float | None
    """The sequence's ends for what is tested: error rate, share of calls slower than the limit, mean cost."""
    breached: bool


@dataclass
class GuardrailStream:
    """One guardrail's stream of the canary's calls."""

    guardrail: Guardrail
    stream: Stream
    raw: list[float] = field(default_factory=list)

    @classmethod
    def start(cls, guardrail: Guardrail, alpha: float) -> GuardrailStream:
        """Return an empty stream for the guardrail."""
        hi = _COST_CLIP * guardrail.limit if guardrail.name == "cost_per_call_usd" else 1.0
        return cls(guardrail, Stream(0.0, hi, alpha))

    def _value(self, call: CallFacts) -> float | None:
        name, limit = self.guardrail.name, self.guardrail.limit
        if name == "error_rate":
            return float(call.error)
        raw = call.latency_ms if name == "p95_latency_ms" else call.cost_usd
        if raw is None or not math.isfinite(raw):
            return None
        self.raw.append(float(raw))
        return float(raw > limit) if name == "p95_latency_ms" else min(float(raw), self.stream.hi)

    def add(self, calls: list[CallFacts]) -> GuardrailReading:
        """Add one poll's canary calls and return the reading."""
        values = [v for v in (self._value(c) for c in calls) if v is not None]
        self.stream.add(values)
        name, limit, s = self.guardrail.name, self.guardrail.limit, self.stream
        tested = _P95_TAIL if name == "p95_latency_ms" else limit
        if name == "error_rate":
            observed = s.mean
        elif not self.raw:
            observed = None
        else:
            observed = float(np.percentile(self.raw, 95) if name == "p95_latency_ms" else np.mean(self.raw))
        breached = s.lower is not None and s.lower > tested
        return GuardrailReading(name, limit, s.n, observed, s.lower, s.upper, breached)

    def to_dict(self) -> dict[str, Any]:
        """Return the state as plain data (JSON-ready)."""
        return {"name": self.guardrail.name, "limit": self.guardrail.limit, "stream": self.stream.to_dict(),
                "raw": self.raw}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GuardrailStream:
        """Return the guardrail stream `to_dict` described."""
        guard = Guardrail(data["name"], float(data["limit"]))
        return cls(guard, Stream.from_dict(data["stream"]), [float(v) for v in data["raw"]])
