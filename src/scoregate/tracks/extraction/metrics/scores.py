"""Scoring one extraction output: parse, validate, compare fields, and combine into the EQS composite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scoregate.tracks.extraction.keys import MATCH_MODES, MatchMode
from scoregate.tracks.extraction.metrics.complexity import SchemaComplexity
from scoregate.tracks.extraction.metrics.counts import FieldCounts
from scoregate.tracks.extraction.metrics.fields import FieldResult, compare_fields, tally
from scoregate.tracks.extraction.metrics.options import DEFAULT_OPTIONS, EqsWeights, ExtractionOptions
from scoregate.tracks.extraction.metrics.validation import compile_schema, parse_output

Failure = Literal["parse_error", "schema_invalid"]


@dataclass(frozen=True, slots=True)
class HallucinationCounts:
    """Spurious fields by severity, plus predicted array elements beyond the expected length."""

    fabricated: int = 0
    misplaced: int = 0
    excess_array_elements: int = 0

    def to_dict(self) -> dict[str, int]:
        """Return the counts as a plain dict."""
        return {
            "fabricated": self.fabricated,
            "misplaced": self.misplaced,
            "excess_array_elements": self.excess_array_elements,
        }


def extraction_quality_score(components: Mapping[str, float | None], weights: EqsWeights) -> float | None:
    """Return the weighted mean of the measured EQS components (None ones are left out, weights renormalised)."""
    pairs = [
        (weights.schema_validity, components.get("schema_validity")),
        (weights.field_f1, components.get("field_f1")),
        (weights.type_accuracy, components.get("type_accuracy")),
        (weights.no_hallucination, components.get("no_hallucination")),
    ]
    measured = [(w, v) for w, v in pairs if v is not None and w > 0]
    total = sum(w for w, _ in measured)
    return sum(w * v for w, v in measured) / total if total else None


@dataclass(frozen=True, slots=True)
class ExtractionScores:
    """Everything measured about one output. An invalid output (parse or schema failure) extracts nothing:
    every expected field is missed, precision/recall/F1 and type accuracy are 0, and EQS is 0."""

    parsed: bool
    schema_valid: bool | None
    """None when no schema was given (then only parsing is checked)."""
    failure: Failure | None
    errors: tuple[str, ...]
    """The parse error, or up to `max_schema_errors` validation messages."""
    fields: tuple[FieldResult, ...]
    counts: FieldCounts
    exact_match: bool
    type_confusion: Mapping[str, Mapping[str, int]]
    """Expected type → predicted type → count, over fields present on both sides."""
    hallucinations: HallucinationCounts
    eqs: float | None
    eqs_components: Mapping[str, float | None]
    complexity: SchemaComplexity | None

    @property
    def valid(self) -> bool:
        """True when the output parsed and (if a schema was given) conforms to it."""
        return self.failure is None

    def precision(self, mode: MatchMode = "partial") -> float | None:
        """Field precision in `mode`; 0 for an invalid output."""
        return self.counts.precision(mode) if self.valid else 0.0

    def recall(self, mode: MatchMode = "partial") -> float | None:
        """Field recall in `mode`; 0 for an invalid output."""
        return self.counts.recall(mode) if self.valid else 0.0

    def f1(self, mode: MatchMode = "partial") -> float:
        """Field F1 in `mode`; 0 for an invalid output."""
        return self.counts.f1(mode) if self.valid else 0.0

    @property
    def type_accuracy(self) -> float | None:
        """Share of paired fields whose predicted type is the expected one; None when no field is paired."""
        return _type_accuracy(self.counts, self.type_confusion) if self.valid else 0.0

    @property
    def hallucination_rate(self) -> float | None:
        """Spurious / predicted fields; None when nothing was predicted or the output is invalid."""
        return _hallucination_rate(self.counts) if self.valid else None

    @property
    def omission_rate(self) -> float | None:
        """Missed / expected fields; None when the reference has no fields."""
        return self.counts.omission_rate()

    def metric_values(self) -> dict[str, float | None]:
        """Return every per-item metric under the stable keys of METRIC_KEYS (booleans as 1.0 / 0.0)."""
        values: dict[str, float | None] = {
            "eqs": self.eqs,
            "parsed": float(self.parsed),
            "schema_valid": None if self.schema_valid is None else float(self.schema_valid),
            "exact_match": float(self.exact_match),
        }
        for mode in MATCH_MODES:
            values[f"field_precision_{mode}"] = self.precision(mode)
            values[f"field_recall_{mode}"] = self.recall(mode)
            values[f"field_f1_{mode}"] = self.f1(mode)
        values["type_accuracy"] = self.type_accuracy
        values["hallucination_rate"] = self.hallucination_rate
        values["omission_rate"] = self.omission_rate
        return values

    def null_reasons(self) -> dict[str, str]:
        """Return, for each metric that is None, why it could not be measured."""
        invalid = {
            "parse_error": "the output is not valid JSON",
            "schema_invalid": "the output does not conform to the schema",
        }
        reasons = {
            "eqs": "no EQS component could be measured",
            "schema_valid": "no schema was given",
            "type_accuracy": "no field is present in both the output and the reference",
            "hallucination_rate": invalid[self.failure] if self.failure else "the output has no fields",
            "omission_rate": "the reference has no fields",
        }
        for mode in MATCH_MODES:
            reasons[f"field_precision_{mode}"] = "the output has no fields"
            reasons[f"field_recall_{mode}"] = "the reference has no fields"
        return {key: reasons[key] for key, value in self.metric_values().items() if value is None}

    def to_dict(self) -> dict[str, Any]:
        """Return metrics, null reasons, counts, failure details and every field outcome as a JSON-ready dict."""
        return {
            "metrics": self.metric_values(),
            "null_reasons": self.null_reasons(),
            "failure": self.failure,
            "errors": list(self.errors),
            "counts": self.counts.to_dict(),
            "type_confusion": {e: dict(row) for e, row in self.type_confusion.items()},
            "hallucinations": self.hallucinations.to_dict(),
            "eqs_components": dict(self.eqs_components),
            "complexity": None if self.complexity is None else self.complexity.to_dict(),
            "fields": [f.to_dict() for f in self.fields],
        }


def _type_accuracy(counts: FieldCounts, confusion: Mapping[str, Mapping[str, int]]) -> float | None:
    correct = sum(row.get(t, 0) for t, row in confusion.items())
    return correct / counts.paired if counts.paired else None


def _hallucination_rate(counts: FieldCounts) -> float | None:
    return counts.spurious / counts.predicted if counts.predicted else None


def _type_confusion(fields: Sequence[FieldResult]) -> dict[str, dict[str, int]]:
    matrix: dict[str, dict[str, int]] = {}
    for f in fields:
        if f.expected_type is not None and f.predicted_type is not None:
            row = matrix.setdefault(f.expected_type, {})
            row[f.predicted_type] = row.get(f.predicted_type, 0) + 1
    return matrix


def _hallucinations(fields: Sequence[FieldResult]) -> HallucinationCounts:
    return HallucinationCounts(
        fabricated=sum(f.severity == "fabricated" for f in fields),
        misplaced=sum(f.severity == "misplaced" for f in fields),
        excess_array_elements=sum(f.excess_elements for f in fields),
    )


def score_extraction(
    output: Any,
    expected: Any,
    schema: Mapping[str, Any] | None = None,
    *,
    alternatives: Mapping[str, Sequence[Any]] | None = None,
    source_text: str | None = None,
    options: ExtractionOptions | None = None,
) -> ExtractionScores:
    """Score one output (JSON text or an already-parsed value) against its reference and JSON Schema.

    `alternatives` maps a field path ("a.b") to other acceptable values; `source_text` (the input text)
    lets a spurious value that occurs in it count as misplaced rather than fabricated. An invalid schema
    raises ScoregateError; an invalid output is a result, never an exception.
    """
    opts = options or DEFAULT_OPTIONS
    compiled = compile_schema(schema, check_formats=opts.check_formats) if schema is not None else None
    required = compiled.required if compiled is not None else None
    parsed = parse_output(output, strip_code_fences=opts.strip_code_fences)
    failure: Failure | None = None
    errors: list[str] = []
    schema_valid: bool | None = None
    if not parsed.ok:
        failure, schema_valid = "parse_error", False
        errors.append(parsed.error or "unparsable output")
    elif compiled is not None:
        errors = compiled.errors(parsed.value, opts.max_schema_errors)
        schema_valid = not errors
        if errors:
            failure = "schema_invalid"
    predicted = parsed.value if failure is None else None
    fields = tuple(
        compare_fields(expected, predicted, opts, alternatives=alternatives, required=required, source_text=source_text)
    )
    counts = tally(fields)
    confusion = _type_confusion(fields)
    components: dict[str, float | None]
    if failure is not None:
        components = dict.fromkeys(("schema_validity", "field_f1", "type_accuracy", "no_hallucination"), 0.0)
        eqs: float | None = 0.0
    else:
        rate = _hallucination_rate(counts)
        components = {
            "schema_validity": None if schema_valid is None else float(schema_valid),
            "field_f1": counts.f1("partial"),
            "type_accuracy": _type_accuracy(counts, confusion),
            "no_hallucination": None if rate is None else 1.0 - rate,
        }
        eqs = extraction_quality_score(components, opts.eqs_weights)
    return ExtractionScores(
        parsed=parsed.ok,
        schema_valid=schema_valid,
        failure=failure,
        errors=tuple(errors),
        fields=fields,
        counts=counts,
        exact_match=failure is None and counts.strict == counts.expected == counts.predicted,
        type_confusion=confusion,
        hallucinations=_hallucinations(fields),
        eqs=eqs,
        eqs_components=components,
        complexity=compiled.complexity if compiled is not None else None,
    )
