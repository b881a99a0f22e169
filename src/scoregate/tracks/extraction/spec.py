"""`kind: extraction`: the evaluator file of the extraction track, its score keys and directions (no metrics loaded)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from scoregate.catalog.directions import default_direction
from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec
from scoregate.catalog.models import Direction, Strict
from scoregate.tracks.extraction.keys import METRIC_KEYS

SOURCE_PATH = r"^(input|metadata)(\.[A-Za-z_][A-Za-z0-9_]*)+$"


class ExtractionThresholds(Strict):
    """Composite-score cut-offs of a field match: exact, partial (half credit), lenient (full credit)."""

    exact: float = Field(default=0.95, ge=0, le=1)
    partial: float = Field(default=0.5, ge=0, le=1)
    lenient: float = Field(default=0.3, ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> ExtractionThresholds:
        if not self.lenient <= self.partial <= self.exact:
            raise ValueError(f"need lenient <= partial <= exact, got {self.lenient}, {self.partial}, {self.exact}")
        return self


class EqsWeightsSpec(Strict):
    """Weights of the Extraction Quality Score (EQS); components that cannot be measured are left out."""

    schema_validity: float = Field(default=0.15, ge=0)
    field_f1: float = Field(default=0.50, ge=0)
    type_accuracy: float = Field(default=0.20, ge=0)
    no_hallucination: float = Field(default=0.15, ge=0)

    @model_validator(mode="after")
    def _positive(self) -> EqsWeightsSpec:
        if self.schema_validity + self.field_f1 + self.type_accuracy + self.no_hallucination <= 0:
            raise ValueError("at least one EQS weight must be positive")
        return self


class ExtractionSpec(EvaluatorSpec):
    """`kind: extraction`: the JSON output is scored field by field against `expected_output`; no model call."""

    kind: Literal["extraction"]
    schema_source: str = Field(default="input.schema", pattern=SOURCE_PATH, description="Path of each item's schema.")
    alternatives_source: str | None = Field(
        default="metadata.expected_alternatives",
        pattern=SOURCE_PATH,
        description="Path of a map: field path → other acceptable values (null: none).",
    )
    text_source: str | None = Field(
        default="input.text",
        pattern=SOURCE_PATH,
        description="Path of the source text: a spurious value found in it is misplaced, not fabricated.",
    )
    case_sensitive: bool = Field(default=True, description="Strict string equality respects case.")
    normalize_whitespace: bool = Field(default=True, description="Strip and collapse whitespace before comparing.")
    float_epsilon: float = Field(default=1e-6, ge=0, description="Relative tolerance of number equality.")
    array_order_matters: bool = Field(default=True, description="False compares arrays as multisets.")
    array_multiset: bool = Field(
        default=False, description="Array Jaccard counts repeated elements; default: the arrays are sets."
    )
    type_coercion: bool = Field(default=True, description='Give value credit across a type confusion ("42" vs 42).')
    check_formats: bool = Field(default=False, description="Assert `format` keywords (email, date...).")
    thresholds: ExtractionThresholds = Field(default_factory=ExtractionThresholds)
    eqs_weights: EqsWeightsSpec = Field(default_factory=EqsWeightsSpec)

    def score_keys(self) -> list[str]:
        """The extraction metrics, in the library's order."""
        return list(METRIC_KEYS)

    def directions(self) -> dict[str, Direction]:
        """Lower is better for the hallucination and omission rates, higher for every other metric (the
        directions the catalog gives these names when no file is at hand, e.g. comparing old runs)."""
        return {key: default_direction(key) for key in METRIC_KEYS}


def _build(spec: ExtractionSpec, default_judge_model: str | None) -> Any:
    from scoregate.tracks.extraction.kind import ExtractionEvaluator

    return ExtractionEvaluator(spec)


KIND = EvaluatorKind("extraction", ExtractionSpec, _build)
