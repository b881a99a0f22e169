"""`kind: extraction`: score a JSON output field by field against the item's reference and JSON Schema.

The per-item scores are the extraction library's METRIC_KEYS; a metric that cannot be measured is null with
the library's reason. An item whose schema is broken, whose reference is missing, or whose reference violates
its own schema is not scored at all: every key is null and the reason names the problem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoregate.errors import ScoregateError
from scoregate.scoring.base import EvalContext, resolve_path
from scoregate.store.records import DataType, Score
from scoregate.tracks.extraction.metrics import (
    METRIC_KEYS,
    EqsWeights,
    ExtractionOptions,
    ExtractionScores,
    compile_schema,
    score_extraction,
)
from scoregate.tracks.extraction.spec import ExtractionSpec

MAX_REFERENCE_ERRORS = 3


def extraction_options(spec: ExtractionSpec) -> ExtractionOptions:
    """Return the library's comparison options for an evaluator file."""
    w = spec.eqs_weights
    return ExtractionOptions(
        case_sensitive=spec.case_sensitive,
        normalize_whitespace=spec.normalize_whitespace,
        float_epsilon=spec.float_epsilon,
        array_order_matters=spec.array_order_matters,
        array_multiset=spec.array_multiset,
        type_coercion=spec.type_coercion,
        exact_threshold=spec.thresholds.exact,
        partial_threshold=spec.thresholds.partial,
        lenient_threshold=spec.thresholds.lenient,
        eqs_weights=EqsWeights(w.schema_validity, w.field_f1, w.type_accuracy, w.no_hallucination),
        check_formats=spec.check_formats,
    )


@dataclass(frozen=True, slots=True)
class ExtractionInputs:
    """What one item gives the scorer: reference, schema, alternatives and source text."""

    expected: Any
    schema: Mapping[str, Any] | None
    alternatives: Mapping[str, Sequence[Any]] | None
    source_text: str | None


def reference_problem(expected: Any, schema: Mapping[str, Any] | None, options: ExtractionOptions) -> str | None:
    """Return why an item cannot be scored (bad schema, no reference, reference breaking its schema), or None."""
    if expected is None:
        return "the item has no expected_output to compare with"
    if schema is None:
        return None
    try:
        compiled = compile_schema(schema, check_formats=options.check_formats)
    except ScoregateError as exc:
        return f"the item's JSON Schema is invalid: {exc.message}"
    errors = compiled.errors(expected, MAX_REFERENCE_ERRORS)
    if errors:
        return "the expected output violates its own schema: " + "; ".join(errors)
    return None


class ExtractionEvaluator:
    """Scores structured-extraction outputs; unparsable replies reach it (as text) and score 0, never null."""

    scores_unparsed_output = True
    """Read by the item pipeline: give this evaluator the raw reply when it is not valid JSON."""

    def __init__(self, spec: ExtractionSpec) -> None:
        self.name = spec.name
        self.version = spec.version
        self.spec = spec
        self.options = extraction_options(spec)

    def score_keys(self) -> list[tuple[str, DataType]]:
        """Every metric of METRIC_KEYS, numeric."""
        return [(key, "numeric") for key in METRIC_KEYS]

    def inputs(self, input: Mapping[str, Any], expected: Any, metadata: Mapping[str, Any]) -> ExtractionInputs:
        """Read the schema, alternatives and source text from an item, as the evaluator file's paths say."""
        ctx = EvalContext("", dict(input), None, expected, dict(metadata), _no_model_call)
        schema = resolve_path(self.spec.schema_source, ctx)
        alternatives = resolve_path(self.spec.alternatives_source, ctx) if self.spec.alternatives_source else None
        text = resolve_path(self.spec.text_source, ctx) if self.spec.text_source else None
        return ExtractionInputs(
            expected=expected,
            schema=schema if isinstance(schema, Mapping) else None,
            alternatives=alternatives if isinstance(alternatives, Mapping) else None,
            source_text=text if isinstance(text, str) else None,
        )

    def problem(self, inputs: ExtractionInputs) -> str | None:
        """Return why this item cannot be scored, or None."""
        return reference_problem(inputs.expected, inputs.schema, self.options)

    def measure(self, output: Any, inputs: ExtractionInputs) -> ExtractionScores:
        """Score one output (JSON text or parsed value) of an item without a reference problem."""
        return score_extraction(
            output,
            inputs.expected,
            inputs.schema,
            alternatives=inputs.alternatives,
            source_text=inputs.source_text,
            options=self.options,
        )

    async def evaluate(self, ctx: EvalContext) -> list[Score]:
        """Return one score per metric key (see `score`)."""
        return self.score(ctx)

    def score(self, ctx: EvalContext) -> list[Score]:
        """Return one score per metric key; all null with the reason when the item cannot be scored."""
        inputs = self.inputs(ctx.input, ctx.expected_output, ctx.metadata)
        problem = self.problem(inputs)
        if problem is not None:
            return [Score.missing(key, "numeric", self.name, problem) for key in METRIC_KEYS]
        result = self.measure(ctx.output, inputs)
        values, reasons = result.metric_values(), result.null_reasons()
        comments = {"eqs": _field_summary(result), "schema_valid": "; ".join(result.errors) or None}
        return [
            Score(
                name=key,
                value=values[key],
                data_type="numeric",
                evaluator=self.name,
                comment=comments.get(key),
                reason=reasons.get(key),
            )
            for key in METRIC_KEYS
        ]


def _field_summary(result: ExtractionScores) -> str:
    c = result.counts
    head = f"{c.exact} exact, {c.partial} partial, {c.incorrect} incorrect, {c.missed} missed, {c.spurious} spurious"
    return head if result.failure is None else f"{result.failure}: {head}"


async def _no_model_call(*_: Any) -> Any:
    raise RuntimeError("the extraction evaluator makes no model call")
