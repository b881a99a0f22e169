"""SemEval-style field counts and the precision, recall and F1 they give in each match mode."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from scoregate.tracks.extraction.keys import MATCH_MODES, MatchMode


@dataclass(slots=True)
class FieldCounts:
    """Counts of field outcomes; `strict` and `weak` refine `exact` and `incorrect` for the other modes.

    expected = exact + partial + incorrect + missed; predicted = exact + partial + incorrect + spurious.
    `strict` counts fields equal under the options (a subset of exact); `weak` counts incorrect fields whose
    score still reaches the lenient threshold.
    """

    exact: int = 0
    partial: int = 0
    incorrect: int = 0
    missed: int = 0
    spurious: int = 0
    strict: int = 0
    weak: int = 0

    @property
    def expected(self) -> int:
        """Fields the reference holds (SemEval POS)."""
        return self.exact + self.partial + self.incorrect + self.missed

    @property
    def predicted(self) -> int:
        """Fields the output holds (SemEval ACT)."""
        return self.exact + self.partial + self.incorrect + self.spurious

    @property
    def paired(self) -> int:
        """Fields present on both sides."""
        return self.exact + self.partial + self.incorrect

    def credit(self, mode: MatchMode) -> float:
        """Return the matched credit: strict equals; exact + ½·partial; or exact + partial + weak."""
        if mode == "strict":
            return float(self.strict)
        if mode == "partial":
            return self.exact + 0.5 * self.partial
        return float(self.exact + self.partial + self.weak)

    def precision(self, mode: MatchMode) -> float | None:
        """Credit / predicted; 1 when nothing was expected or predicted; None when only expected is non-empty."""
        if self.predicted == 0:
            return 1.0 if self.expected == 0 else None
        return self.credit(mode) / self.predicted

    def recall(self, mode: MatchMode) -> float | None:
        """Credit / expected; 1 when nothing was expected or predicted; None when only predicted is non-empty."""
        if self.expected == 0:
            return 1.0 if self.predicted == 0 else None
        return self.credit(mode) / self.expected

    def f1(self, mode: MatchMode) -> float:
        """2·credit / (expected + predicted), the harmonic mean of precision and recall; 1 when both are empty."""
        total = self.expected + self.predicted
        return 2 * self.credit(mode) / total if total else 1.0

    def omission_rate(self) -> float | None:
        """Missed / expected, None when nothing was expected."""
        return self.missed / self.expected if self.expected else None

    def add(self, other: FieldCounts) -> None:
        """Add another set of counts into this one."""
        self.exact += other.exact
        self.partial += other.partial
        self.incorrect += other.incorrect
        self.missed += other.missed
        self.spurious += other.spurious
        self.strict += other.strict
        self.weak += other.weak

    def metrics(self) -> dict[str, float | None]:
        """Return precision, recall and F1 in every mode, plus the omission rate, under stable keys."""
        out: dict[str, float | None] = {}
        for mode in MATCH_MODES:
            out[f"precision_{mode}"] = self.precision(mode)
            out[f"recall_{mode}"] = self.recall(mode)
            out[f"f1_{mode}"] = self.f1(mode)
        out["omission_rate"] = self.omission_rate()
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the counts, the expected and predicted totals, and the metrics."""
        return {**asdict(self), "expected": self.expected, "predicted": self.predicted, **self.metrics()}
