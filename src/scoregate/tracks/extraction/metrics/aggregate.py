"""Streaming aggregation over items: micro field metrics, macro EQS, rates, breakdowns and distributions.

Memory grows with the number of distinct field paths and one float per item (its EQS), not with fields.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from statistics import fmean
from typing import Any

from scoregate.tracks.extraction.keys import MATCH_MODES
from scoregate.tracks.extraction.metrics.counts import FieldCounts
from scoregate.tracks.extraction.metrics.fields import FieldResult, add_to_counts
from scoregate.tracks.extraction.metrics.scores import ExtractionScores, HallucinationCounts

BREAKDOWNS = ("type", "depth", "required", "field", "complexity")
SCORE_BINS: tuple[tuple[str, float], ...] = (
    ("excellent", 0.95),
    ("good", 0.80),
    ("fair", 0.60),
    ("poor", 0.40),
    ("very_poor", 0.0),
)
"""Bins of the composite score of paired fields, each with its lower bound (upper bound: the bin above)."""
STRING_STRATEGIES = ("token_f1", "levenshtein", "containment")
_HIST_BINS = 10


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _depth_key(depth: int) -> str:
    return str(depth) if depth < 2 else "2+"


def _required_key(required: bool | None) -> str:
    return "unknown" if required is None else ("required" if required else "optional")


@dataclass(frozen=True, slots=True)
class ExtractionAggregate:
    """Dataset-level extraction metrics: micro over fields for P/R/F1, macro over items for EQS."""

    items: int
    parse_failures: int
    schema_checked: int
    """Items scored against a schema (the rest were only parsed)."""
    schema_failures: int
    exact_matches: int
    counts: FieldCounts
    eqs_values: tuple[float, ...]
    """Per-item EQS, in the order the items were added (for CIs and paired comparisons)."""
    macro_f1: Mapping[str, float | None]
    type_confusion: Mapping[str, Mapping[str, int]]
    hallucinations: HallucinationCounts
    breakdowns: Mapping[str, Mapping[str, FieldCounts]]
    """By `type`, `depth` (0, 1, 2+), `required` (required/optional/unknown), `field` path, `complexity` bin."""
    complexity_items: Mapping[str, int]
    complexity_eqs: Mapping[str, float | None]
    score_distribution: Mapping[str, int]
    string_similarity: Mapping[str, Mapping[str, Any]]
    """Per strategy: `mean` and a 10-bin `histogram` over paired string fields."""

    @property
    def valid_outputs(self) -> int:
        """Items that parsed and conformed to their schema (or had none)."""
        return self.items - self.parse_failures - self.schema_failures

    def metric_values(self) -> dict[str, float | None]:
        """Return the dataset metrics under stable keys; None where nothing could be measured."""
        paired = self.counts.paired
        correct_types = sum(row.get(t, 0) for t, row in self.type_confusion.items())
        values: dict[str, float | None] = {
            "eqs": fmean(self.eqs_values) if self.eqs_values else None,
            "eqs_coverage": _ratio(len(self.eqs_values), self.items),
            "schema_validity_rate": _ratio(self.valid_outputs, self.items),
            "parse_failure_rate": _ratio(self.parse_failures, self.items),
            "schema_failure_rate": _ratio(self.schema_failures, self.items),
            "exact_match_rate": _ratio(self.exact_matches, self.items),
            "exact_match_rate_of_valid": _ratio(self.exact_matches, self.valid_outputs),
        }
        for mode in MATCH_MODES:
            values[f"field_precision_{mode}"] = self.counts.precision(mode) if self.items else None
            values[f"field_recall_{mode}"] = self.counts.recall(mode) if self.items else None
            values[f"field_f1_{mode}"] = self.counts.f1(mode) if self.items else None
            values[f"macro_field_f1_{mode}"] = self.macro_f1.get(mode)
        values["type_accuracy"] = _ratio(correct_types, paired)
        values["hallucination_rate"] = _ratio(self.counts.spurious, self.counts.predicted)
        values["omission_rate"] = self.counts.omission_rate()
        return values

    def null_reasons(self) -> dict[str, str]:
        """Return, for each dataset metric that is None, why."""
        no_output_fields = "no output had fields"
        no_reference_fields = "no reference had fields"
        specific = {
            "exact_match_rate_of_valid": "no output was valid",
            "type_accuracy": "no field was present in both an output and its reference",
            "hallucination_rate": no_output_fields,
            "omission_rate": no_reference_fields,
        }
        for mode in MATCH_MODES:
            specific[f"field_precision_{mode}"] = no_output_fields
            specific[f"field_recall_{mode}"] = no_reference_fields
        return {
            key: specific.get(key, "no item was aggregated") if self.items else "no item was aggregated"
            for key, value in self.metric_values().items()
            if value is None
        }

    def to_dict(self) -> dict[str, Any]:
        """Return every aggregate as a JSON-ready dict (per-item EQS values excluded; see `eqs_values`)."""
        return {
            "metrics": self.metric_values(),
            "null_reasons": self.null_reasons(),
            "items": self.items,
            "valid_outputs": self.valid_outputs,
            "parse_failures": self.parse_failures,
            "schema_checked": self.schema_checked,
            "schema_failures": self.schema_failures,
            "exact_matches": self.exact_matches,
            "counts": self.counts.to_dict(),
            "type_confusion": {e: dict(row) for e, row in self.type_confusion.items()},
            "hallucinations": self.hallucinations.to_dict(),
            "breakdowns": {
                name: {key: c.to_dict() for key, c in groups.items()} for name, groups in self.breakdowns.items()
            },
            "complexity": {
                b: {"items": n, "eqs": self.complexity_eqs.get(b)} for b, n in self.complexity_items.items()
            },
            "score_distribution": dict(self.score_distribution),
            "string_similarity": {k: dict(v) for k, v in self.string_similarity.items()},
        }


class ExtractionAggregator:
    """Add item results one at a time with `add`, then read the aggregates with `result` (any number of times)."""

    def __init__(self) -> None:
        self._items = 0
        self._parse_failures = 0
        self._schema_checked = 0
        self._schema_failures = 0
        self._exact = 0
        self._counts = FieldCounts()
        self._eqs = array("d")
        self._f1_sums = dict.fromkeys(MATCH_MODES, 0.0)
        self._confusion: dict[str, dict[str, int]] = {}
        self._fabricated = self._misplaced = self._excess = 0
        self._groups: dict[str, dict[str, FieldCounts]] = {name: {} for name in BREAKDOWNS}
        self._complexity_items: dict[str, int] = {}
        self._complexity_eqs: dict[str, list[float]] = {}
        self._score_bins = dict.fromkeys((name for name, _ in SCORE_BINS), 0)
        self._sim_sums = dict.fromkeys(STRING_STRATEGIES, 0.0)
        self._sim_hist = {name: [0] * _HIST_BINS for name in STRING_STRATEGIES}
        self._sim_n = 0

    def add(self, scores: ExtractionScores) -> None:
        """Fold one item's scores into the running aggregates."""
        self._items += 1
        self._parse_failures += scores.failure == "parse_error"
        self._schema_checked += scores.complexity is not None
        self._schema_failures += scores.failure == "schema_invalid"
        self._exact += scores.exact_match
        self._counts.add(scores.counts)
        if scores.eqs is not None:
            self._eqs.append(scores.eqs)
        for mode in MATCH_MODES:
            self._f1_sums[mode] += scores.f1(mode)
        for expected_type, row in scores.type_confusion.items():
            target = self._confusion.setdefault(expected_type, {})
            for predicted_type, n in row.items():
                target[predicted_type] = target.get(predicted_type, 0) + n
        self._fabricated += scores.hallucinations.fabricated
        self._misplaced += scores.hallucinations.misplaced
        self._excess += scores.hallucinations.excess_array_elements
        bin_name = scores.complexity.bin if scores.complexity is not None else "unknown"
        self._complexity_items[bin_name] = self._complexity_items.get(bin_name, 0) + 1
        if scores.eqs is not None:
            sums = self._complexity_eqs.setdefault(bin_name, [0.0, 0.0])
            sums[0] += scores.eqs
            sums[1] += 1
        for f in scores.fields:
            self._add_field(f, bin_name)

    def _group(self, name: str, key: str) -> FieldCounts:
        groups = self._groups[name]
        counts = groups.get(key)
        if counts is None:
            counts = groups[key] = FieldCounts()
        return counts

    def _add_field(self, f: FieldResult, bin_name: str) -> None:
        one = (f,)
        add_to_counts(self._group("type", f.expected_type or f.predicted_type or "unknown"), one)
        add_to_counts(self._group("depth", _depth_key(f.depth)), one)
        add_to_counts(self._group("required", _required_key(f.required)), one)
        add_to_counts(self._group("field", f.path), one)
        add_to_counts(self._group("complexity", bin_name), one)
        if f.category in ("missed", "spurious"):
            return
        for name, lower in SCORE_BINS:
            if f.score >= lower:
                self._score_bins[name] += 1
                break
        sim = f.string_similarity
        if sim is not None:
            self._sim_n += 1
            for name in STRING_STRATEGIES:
                value = getattr(sim, name)
                self._sim_sums[name] += value
                self._sim_hist[name][min(int(value * _HIST_BINS), _HIST_BINS - 1)] += 1

    def result(self) -> ExtractionAggregate:
        """Return a snapshot of the aggregates so far."""
        modes: dict[str, float | None] = {
            mode: (self._f1_sums[mode] / self._items if self._items else None) for mode in MATCH_MODES
        }
        return ExtractionAggregate(
            items=self._items,
            parse_failures=self._parse_failures,
            schema_checked=self._schema_checked,
            schema_failures=self._schema_failures,
            exact_matches=self._exact,
            counts=replace(self._counts),
            eqs_values=tuple(self._eqs),
            macro_f1=modes,
            type_confusion={e: dict(row) for e, row in self._confusion.items()},
            hallucinations=HallucinationCounts(self._fabricated, self._misplaced, self._excess),
            breakdowns={name: {key: replace(c) for key, c in groups.items()} for name, groups in self._groups.items()},
            complexity_items=dict(self._complexity_items),
            complexity_eqs={b: _ratio(s, n) for b, (s, n) in self._complexity_eqs.items()},
            score_distribution=dict(self._score_bins),
            string_similarity={
                name: {
                    "mean": _ratio(self._sim_sums[name], self._sim_n),
                    "histogram": list(self._sim_hist[name]),
                }
                for name in STRING_STRATEGIES
            },
        )


def aggregate_extraction(results: Iterable[ExtractionScores]) -> ExtractionAggregate:
    """Aggregate an iterable of ExtractionScores (consumed once, streaming)."""
    aggregator = ExtractionAggregator()
    for scores in results:
        aggregator.add(scores)
    return aggregator.result()
