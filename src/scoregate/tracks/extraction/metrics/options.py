"""How extraction outputs are compared: normalisation, thresholds and EQS weights."""

from __future__ import annotations

from dataclasses import dataclass, field

from scoregate.errors import ScoregateError


@dataclass(frozen=True, slots=True)
class EqsWeights:
    """Weights of the Extraction Quality Score; components that cannot be measured are left out."""

    schema_validity: float = 0.15
    field_f1: float = 0.50
    type_accuracy: float = 0.20
    no_hallucination: float = 0.15

    def __post_init__(self) -> None:
        values = (self.schema_validity, self.field_f1, self.type_accuracy, self.no_hallucination)
        if any(w < 0 for w in values) or sum(values) <= 0:
            raise ScoregateError(
                f"EQS weights must be non-negative with a positive sum, got {values}",
                where="extraction options: eqs_weights",
                hint="use e.g. schema_validity=0.15, field_f1=0.5, type_accuracy=0.2, no_hallucination=0.15",
            )


@dataclass(frozen=True, slots=True)
class ExtractionOptions:
    """Comparison settings; the defaults follow the benchmark spec (strict case, normalised whitespace)."""

    case_sensitive: bool = True
    """Strict equality of strings respects case (partial scores always compare lower-cased)."""
    normalize_whitespace: bool = True
    """Strip strings and collapse runs of whitespace before comparing."""
    float_epsilon: float = 1e-6
    """Numbers within this relative (or absolute, near zero) tolerance are equal."""
    array_order_matters: bool = True
    """Strict equality of arrays compares element by element; False compares them as multisets."""
    array_multiset: bool = False
    """Array Jaccard counts repeated elements (a multiset); the default compares the arrays as sets."""
    type_coercion: bool = True
    """Give value credit across a type confusion ("42" vs 42); the field is never exact and its type is wrong."""
    exact_threshold: float = 0.95
    """A composite score at or above this (with the right type) is an exact match."""
    partial_threshold: float = 0.5
    """A composite score at or above this is a partial match (half credit in partial mode)."""
    lenient_threshold: float = 0.3
    """A composite score at or above this earns full credit in lenient mode."""
    string_weights: tuple[float, float, float] = (0.5, 0.3, 0.2)
    """Weights of token-overlap F1, normalised Levenshtein similarity and containment for strings."""
    eqs_weights: EqsWeights = field(default_factory=EqsWeights)
    check_formats: bool = False
    """Assert JSON Schema `format` keywords (email, date, ...) during validation."""
    strip_code_fences: bool = True
    """Accept JSON text wrapped in a Markdown code fence (```json ... ```)."""
    max_schema_errors: int = 5
    """How many schema-validation messages to keep per output."""

    def __post_init__(self) -> None:
        where = "extraction options"
        if not 0 <= self.lenient_threshold <= self.partial_threshold <= self.exact_threshold <= 1:
            raise ScoregateError(
                "thresholds must satisfy 0 <= lenient <= partial <= exact <= 1, got "
                f"{self.lenient_threshold}, {self.partial_threshold}, {self.exact_threshold}",
                where=where,
                hint="the defaults are lenient=0.3, partial=0.5, exact=0.95",
            )
        if self.float_epsilon < 0:
            raise ScoregateError(f"float_epsilon must be >= 0, got {self.float_epsilon}", where=where)
        if len(self.string_weights) != 3 or any(w < 0 for w in self.string_weights) or not sum(self.string_weights):
            raise ScoregateError(
                f"string_weights must be three non-negative numbers with a positive sum, got {self.string_weights}",
                where=where,
                hint="the default is (0.5, 0.3, 0.2): token F1, Levenshtein, containment",
            )
        if self.max_schema_errors < 1:
            raise ScoregateError(f"max_schema_errors must be >= 1, got {self.max_schema_errors}", where=where)


DEFAULT_OPTIONS = ExtractionOptions()
