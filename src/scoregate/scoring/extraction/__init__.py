"""Structured-extraction scoring: schema validity, field P/R/F1 in three modes, types, hallucinations, EQS.

Pure functions over parsed values; no I/O. Score one item with `score_extraction`, aggregate many with
`ExtractionAggregator` (streaming) or `aggregate_extraction`.
"""

from scoregate.scoring.extraction.aggregate import (
    BREAKDOWNS,
    SCORE_BINS,
    ExtractionAggregate,
    ExtractionAggregator,
    aggregate_extraction,
)
from scoregate.scoring.extraction.complexity import (
    ComplexityBin,
    SchemaComplexity,
    SchemaField,
    complexity_bin,
    schema_complexity,
    schema_fields,
)
from scoregate.scoring.extraction.counts import FieldCounts
from scoregate.scoring.extraction.fields import Category, FieldResult, Severity, compare_fields, tally
from scoregate.scoring.extraction.options import MATCH_MODES, EqsWeights, ExtractionOptions, MatchMode
from scoregate.scoring.extraction.scores import (
    METRIC_KEYS,
    ExtractionScores,
    Failure,
    HallucinationCounts,
    extraction_quality_score,
    score_extraction,
)
from scoregate.scoring.extraction.similarity import (
    JsonType,
    StringSimilarity,
    array_jaccard,
    json_type,
    number_similarity,
    similarity,
    strict_equal,
    string_similarity,
)
from scoregate.scoring.extraction.validation import (
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
