"""The records a run produces: scores, per-call telemetry and item results, as stored in `results.jsonl`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Literal

ScoreValue = float | int | bool | str | None
DataType = Literal["numeric", "boolean", "categorical", "text"]


@dataclass(slots=True)
class Score:
    """One named score of one item. `value is None` means not measured, and `reason` says why."""

    name: str
    value: ScoreValue
    data_type: DataType
    evaluator: str
    comment: str | None = None
    reason: str | None = None
    spread: float | None = None

    @classmethod
    def missing(cls, name: str, data_type: DataType, evaluator: str, reason: str) -> Score:
        """Return a null score carrying the reason it could not be measured."""
        return cls(name=name, value=None, data_type=data_type, evaluator=evaluator, reason=reason)

    @property
    def measured(self) -> bool:
        """True when the score holds a value."""
        return self.value is not None


def _finite(score: Score) -> Score:
    """A stored NaN or infinity (a file edited by hand or written by another tool) is not a measurement: not measured,
    with the reason; the store itself never writes one."""
    value = score.value
    if isinstance(value, float) and not math.isfinite(value):
        score.value, score.reason = None, f"the stored value {value} is not a finite number"
    return score


@dataclass(slots=True)
class CallRecord:
    """Telemetry of one model call (task or judge): latency, tokens, cost, retries, error."""

    purpose: str
    model: str
    endpoint: str
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    retries: int = 0
    cached: bool = False
    error: str | None = None
    started_at: str | None = None
    """When the call started (ISO 8601, UTC); None in runs stored before it was recorded."""
    ended_at: str | None = None
    """When the answer (or the final error) came, retries included."""
    model_name: str | None = None
    provider: str | None = None
    duration_ms: float | None = None
    structured: bool | None = None
    schema_name: str | None = None
    note: str | None = None
    """What was changed in the reply to keep it storable (lone surrogates)."""


@dataclass(slots=True)
class ItemResult:
    """Everything one dataset item produced in a run; one line of `results.jsonl`."""

    index: int
    item_id: str
    prompt: str
    input: dict[str, Any]
    output: Any
    expected_output: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    raw_output: str | None = None
    scores: list[Score] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    repeat: int = 1
    stages: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the store changed to keep the record storable (a lone surrogate, an infinite number)."""

    def to_json_dict(self) -> dict[str, Any]:
        """Return the plain-dict form written to `results.jsonl` (shallow: nothing is copied, only read)."""
        row = {name: getattr(self, name) for name in _ITEM_FIELDS}
        row["scores"] = [{name: getattr(s, name) for name in _SCORE_FIELDS} for s in self.scores]
        row["calls"] = [{name: getattr(c, name) for name in _CALL_FIELDS} for c in self.calls]
        return row

    @classmethod
    def from_json_dict(cls, raw: dict[str, Any]) -> ItemResult:
        """Rebuild a result from its stored dict."""
        data = dict(raw)
        data["scores"] = [_finite(Score(**s)) for s in data.get("scores", [])]
        data["calls"] = [CallRecord(**c) for c in data.get("calls", [])]
        return cls(**data)

    def score(self, name: str) -> Score | None:
        """Return the score called `name`, if this item has one."""
        for s in self.scores:
            if s.name == name:
                return s
        return None

    @property
    def failed_calls(self) -> int:
        """How many of this item's model calls failed after their retries (task, stage or judge)."""
        return sum(call.error is not None for call in self.calls)

    @property
    def needs_retry(self) -> bool:
        """True when `run --resume --retry-errors` runs this item again: it failed, or one of its calls did."""
        return self.error is not None or self.failed_calls > 0

    @property
    def task_call(self) -> CallRecord | None:
        """The call that produced the output."""
        for c in self.calls:
            if c.purpose == "task":
                return c
        return None


_ITEM_FIELDS = tuple(f.name for f in fields(ItemResult))
_SCORE_FIELDS = tuple(f.name for f in fields(Score))
_CALL_FIELDS = tuple(f.name for f in fields(CallRecord))
