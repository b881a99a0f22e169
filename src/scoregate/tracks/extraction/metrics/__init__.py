"""Structured-extraction scoring: schema validity, field P/R/F1 in three modes, types, hallucinations, EQS.

Pure functions over parsed values; no I/O. Score one item with `score_extraction`, aggregate many with
`ExtractionAggregator` (streaming) or `aggregate_extraction`.
"""

from scoregate.tracks.extraction.keys import MATCH_MODES, METRIC_KEYS, MatchMode
from scoregate.tracks.extraction.metrics.aggregate import (
    BREAKDOWNS,
    SCORE_BINS,
    ExtractionAggregate,
    ExtractionAggregator,
    aggregate_extraction,
)
from scoregate.tracks.extraction.metrics.complexity import (
    ComplexityBin,
    SchemaComplexity,
    SchemaField,
    complexity_bin,
    schema_complexity,
    schema_fields,
)
from scoregate.tracks.extraction.metrics.counts import FieldCounts
from scoregate.tracks.extraction.metrics.fields import Category, FieldResult, Severity, compare_fields, tally
from scoregate.tracks.extraction.metrics.options import EqsWeights, ExtractionOptions
from scoregate.tracks.extraction.metrics.scores import (
    ExtractionScores,
    Failure,
    HallucinationCounts,
    extraction_quality_score,
    score_extraction,
)
from scoregate.tracks.extraction.metrics.similarity import (
    JsonType,
    StringSimilarity,
    array_jaccard,
    json_type,
    number_similarity,
    similarity,
    strict_equal,
    string_similarity,
)
from scoregate.tracks.extraction.metrics.validation import (
    CompiledSchema,
    ParsedOutput,
    clear_schema_cache,
    compile_schema,
    parse_output,
)

__all__ = [
    "BREAKDOWNS",
    "MATCH_MODES",
    "METRIC_KEYS",
    "SCORE_BINS",
    "Category",
    "CompiledSchema",
    "ComplexityBin",
    "EqsWeights",
    "ExtractionAggregate",
    "ExtractionAggregator",
    "ExtractionOptions",
    "ExtractionScores",
    "Failure",
    "FieldCounts",
    "FieldResult",
    "HallucinationCounts",
    "JsonType",
    "MatchMode",
    "ParsedOutput",
    "SchemaComplexity",
    "SchemaField",
    "Severity",
    "StringSimilarity",
    "aggregate_extraction",
    "array_jaccard",
    "clear_schema_cache",
    "compare_fields",
    "compile_schema",
    "complexity_bin",
    "extraction_quality_score",
    "json_type",
    "number_similarity",
    "parse_output",
    "schema_complexity",
    "schema_fields",
    "score_extraction",
    "similarity",
    "strict_equal",
    "string_similarity",
    "tally",
]
