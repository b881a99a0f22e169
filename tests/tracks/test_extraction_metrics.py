"""Extraction metrics per item and aggregated, each checked against values worked out by hand in the comments."""

from __future__ import annotations

import pytest

from scoregate.errors import ScoregateError
from scoregate.tracks.extraction.metrics import (
    EqsWeights,
    ExtractionAggregator,
    ExtractionOptions,
    ExtractionScores,
    aggregate_extraction,
    array_jaccard,
    compile_schema,
    number_similarity,
    schema_complexity,
    score_extraction,
    similarity,
    strict_equal,
    string_similarity,
)

OPTS = ExtractionOptions()

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": ["integer", "string"]},
        "city": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "contact": {
            "type": "object",
            "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
            "required": ["email"],
        },
    },
    "required": ["name", "age"],
}
PERSON = {
    "name": "John Smith",
    "age": 35,
    "city": "San Francisco",
    "tags": ["a", "b", "c"],
    "contact": {"email": "j@x.org", "phone": "555"},
}
# name: case differs (exact, not strict); age: "35" for 35 (type confusion, partial); city: partial 0.84375;
# tags: Jaccard 0.4 (incorrect, lenient) with one excess element; contact.email strict; contact.phone missed;
# nickname spurious and found nowhere in the reference (fabricated).
PERSON_PREDICTED = {
    "name": "john smith",
    "age": "35",
    "city": "San Francisco CA",
    "tags": ["a", "b", "d", "e"],
    "contact": {"email": "j@x.org"},
    "nickname": "Johnny",
}


# ---------------------------------------------------------------- per-type partial scores


def test_string_similarity_superset_worked_by_hand() -> None:
    # "san francisco" vs "san francisco ca": tokens {san, francisco} vs {san, francisco, ca}: F1 = 2·2/(2+3) = 0.8;
    # Levenshtein distance 3 over max length 16: 1 − 3/16 = 0.8125; expected contained in predicted: 1.0.
    # composite = 0.5·0.8 + 0.3·0.8125 + 0.2·1 = 0.84375
    sim = string_similarity("San Francisco", "San Francisco CA", OPTS)
    assert sim.token_f1 == pytest.approx(0.8)
    assert sim.levenshtein == pytest.approx(0.8125)
    assert sim.containment == 1.0
    assert sim.composite == pytest.approx(0.84375)


def test_string_similarity_subset_uses_length_ratio_for_containment() -> None:
    # predicted "general hospital" (16 chars) inside "metro general hospital" (22): containment 16/22;
    # tokens 2 of 3: F1 = 4/5 = 0.8; distance 6 ("metro "): 1 − 6/22 = 16/22.
    # composite = 0.4 + 0.3·16/22 + 0.2·16/22 = 0.4 + 8/22 = 0.763636...
    sim = string_similarity("Metro General Hospital", "General Hospital", OPTS)
    assert sim.containment == pytest.approx(16 / 22)
    assert sim.levenshtein == pytest.approx(16 / 22)
    assert sim.composite == pytest.approx(0.4 + 8 / 22)


def test_string_weights_are_configurable() -> None:
    # Only containment counts: "general hospital" in "metro general hospital" → 16/22.
    sim = string_similarity("Metro General Hospital", "General Hospital", ExtractionOptions(string_weights=(0, 0, 1)))
    assert sim.composite == pytest.approx(16 / 22)


def test_number_similarity_is_one_minus_relative_difference() -> None:
    assert number_similarity(35, 36) == pytest.approx(1 - 1 / 35)  # 0.9714 → counts as exact (≥ 0.95)
    assert number_similarity(100, 80) == pytest.approx(0.8)
    assert number_similarity(10, 30) == 0.0  # 1 − 2 floored at 0
    assert number_similarity(0, 0) == 1.0
    assert number_similarity(0, 0.001) == 0.0


def test_boolean_partial_score_is_all_or_nothing() -> None:
    assert similarity(True, True, OPTS)[0] == 1.0
    assert similarity(True, False, OPTS)[0] == 0.0


def test_array_jaccard_is_on_sets_by_default_with_a_multiset_option() -> None:
    # {a, b, c} vs {a, b, d, e}: 2 shared, union 5 → 0.4
    assert array_jaccard(["a", "b", "c"], ["a", "b", "d", "e"], OPTS) == pytest.approx(0.4)
    # [a, a] vs [a]: the same set → 1.0; as multisets 1 shared of 2 → 0.5
    assert array_jaccard(["a", "a"], ["a"], OPTS) == 1.0
    assert array_jaccard(["a", "a"], ["a"], ExtractionOptions(array_multiset=True)) == pytest.approx(0.5)
    assert array_jaccard(["a", "a", "b"], ["a", "b", "b"], ExtractionOptions(array_multiset=True)) == pytest.approx(
        2 / 4
    )
    # spacing is normalised (normalize_whitespace: true by default)
    assert array_jaccard(["New  York"], ["New York"], OPTS) == 1.0


def test_array_similarity_respects_case_sensitive() -> None:
    assert array_jaccard(["Go"], ["go"], OPTS) == 0.0  # case_sensitive: true is the default
    assert similarity(["Go", "Rust"], ["go", "Rust"], OPTS)[0] == pytest.approx(1 / 3)
    folded = ExtractionOptions(case_sensitive=False)
    assert array_jaccard(["Go"], ["go"], folded) == 1.0
    assert similarity(["Go", "Rust"], ["go", "Rust"], folded)[0] == 1.0


def test_array_jaccard_agrees_with_scipy_on_random_sets() -> None:
    import random

    from scipy.spatial.distance import jaccard

    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(12)]
    for _ in range(300):
        expected = rng.choices(vocabulary, k=rng.randint(1, 8))
        predicted = rng.choices(vocabulary, k=rng.randint(1, 8))
        e_vec = [w in expected for w in vocabulary]
        p_vec = [w in predicted for w in vocabulary]
        assert array_jaccard(expected, predicted, OPTS) == pytest.approx(1 - jaccard(e_vec, p_vec), abs=1e-15)


def test_nested_object_similarity_is_the_mean_over_keys() -> None:
    # keys {x, y, z}: x equal (1), y 100 vs 80 (0.8), z only predicted (0) → (1 + 0.8 + 0) / 3
    score, _ = similarity({"x": "a", "y": 100}, {"x": "a", "y": 80, "z": 1}, OPTS)
    assert score == pytest.approx(1.8 / 3)


# ---------------------------------------------------------------- strict equality options


def test_strict_equality_follows_the_options() -> None:
    assert not strict_equal("John Smith", "john smith", OPTS)  # case-sensitive by default
    assert strict_equal("John Smith", "john smith", ExtractionOptions(case_sensitive=False))
    assert strict_equal("San  Jose ", "San Jose", OPTS)  # whitespace normalised by default
    assert not strict_equal("San  Jose ", "San Jose", ExtractionOptions(normalize_whitespace=False))
    assert strict_equal(0.1 + 0.2, 0.3, OPTS)  # within float epsilon
    assert not strict_equal(1.0, 1.001, OPTS)
    assert strict_equal(1.0, 1.001, ExtractionOptions(float_epsilon=0.01))
    assert not strict_equal(["a", "b"], ["b", "a"], OPTS)  # order matters by default
    assert strict_equal(["a", "b"], ["b", "a"], ExtractionOptions(array_order_matters=False))
    assert not strict_equal("42", 42, OPTS)  # value and type
    assert not strict_equal(1, True, OPTS)  # a boolean is not a number


# ---------------------------------------------------------------- one item, every metric


def test_nested_item_with_every_kind_of_field_outcome() -> None:
    s = score_extraction(PERSON_PREDICTED, PERSON, PERSON_SCHEMA)
    by_path = {f.path: f for f in s.fields}
    assert {p: f.category for p, f in by_path.items()} == {
        "name": "exact",
        "age": "partial",
        "city": "partial",
        "tags": "incorrect",
        "contact.email": "exact",
        "contact.phone": "missed",
        "nickname": "spurious",
    }
    assert by_path["city"].score == pytest.approx(0.84375)
    assert by_path["tags"].score == pytest.approx(0.4)
    assert by_path["tags"].excess_elements == 1  # 4 predicted elements for 3 expected
    assert by_path["nickname"].severity == "fabricated"
    assert (by_path["contact.email"].depth, by_path["name"].depth) == (1, 0)
    assert by_path["age"].required is True and by_path["city"].required is False
    assert by_path["nickname"].required is None  # not in the schema

    c = s.counts
    assert (c.exact, c.partial, c.incorrect, c.missed, c.spurious, c.strict, c.weak) == (2, 2, 1, 1, 1, 1, 1)
    assert (c.expected, c.predicted) == (6, 6)
    # strict credit 1 (email): P = R = F1 = 1/6
    assert s.f1("strict") == pytest.approx(1 / 6)
    # partial credit 2 + ½·2 = 3: P = R = F1 = 3/6
    assert s.precision("partial") == pytest.approx(0.5)
    assert s.recall("partial") == pytest.approx(0.5)
    assert s.f1("partial") == pytest.approx(0.5)
    # lenient credit 2 + 2 + 1 (tags scores 0.4 ≥ 0.3) = 5: 5/6
    assert s.f1("lenient") == pytest.approx(5 / 6)
    # 5 paired fields, age has the wrong type: 4/5
    assert s.type_accuracy == pytest.approx(0.8)
    assert s.type_confusion == {"string": {"string": 3}, "number": {"string": 1}, "array": {"array": 1}}
    assert s.hallucination_rate == pytest.approx(1 / 6)
    assert s.hallucinations.to_dict() == {"fabricated": 1, "misplaced": 0, "excess_array_elements": 1}
    assert s.omission_rate == pytest.approx(1 / 6)
    # EQS = 0.15·1 + 0.50·0.5 + 0.20·0.8 + 0.15·(1 − 1/6) = 0.15 + 0.25 + 0.16 + 0.125 = 0.685
    assert s.eqs == pytest.approx(0.685)
    assert not s.exact_match


def test_case_insensitive_option_turns_the_name_strict() -> None:
    s = score_extraction(PERSON_PREDICTED, PERSON, PERSON_SCHEMA, options=ExtractionOptions(case_sensitive=False))
    # name joins email as a strict match: strict credit 2 of 6
    assert s.counts.strict == 2
    assert s.f1("strict") == pytest.approx(2 / 6)


def test_eqs_weights_are_configurable() -> None:
    weights = EqsWeights(schema_validity=0, field_f1=1, type_accuracy=0, no_hallucination=0)
    s = score_extraction(PERSON_PREDICTED, PERSON, PERSON_SCHEMA, options=ExtractionOptions(eqs_weights=weights))
    assert s.eqs == pytest.approx(0.5)  # the partial F1 alone


def test_perfect_output_scores_one_everywhere() -> None:
    s = score_extraction(PERSON, PERSON, PERSON_SCHEMA)
    assert s.exact_match
    assert s.eqs == 1.0
    assert all(v == 1.0 for k, v in s.metric_values().items() if k not in ("hallucination_rate", "omission_rate"))
    assert s.hallucination_rate == 0.0 and s.omission_rate == 0.0


# ---------------------------------------------------------------- type confusions


def test_string_for_number_is_a_type_error_with_value_credit() -> None:
    s = score_extraction({"n": "42"}, {"n": 42}, None)
    (f,) = s.fields
    # the value is right (1.0) but the type is wrong: never exact, so partial (½ credit in partial mode)
    assert (f.category, f.score, f.type_correct) == ("partial", 1.0, False)
    assert s.type_accuracy == 0.0
    assert s.type_confusion == {"number": {"string": 1}}
    assert s.f1("partial") == pytest.approx(0.5)
    assert s.f1("strict") == 0.0
    assert s.f1("lenient") == 1.0


def test_without_type_coercion_a_type_confusion_scores_zero() -> None:
    s = score_extraction({"n": "42"}, {"n": 42}, None, options=ExtractionOptions(type_coercion=False))
    assert s.fields[0].category == "incorrect"
    assert s.fields[0].score == 0.0


def test_scalar_for_object_pairs_once_and_misses_the_rest() -> None:
    # expected object with 2 leaves, predicted a string: one incorrect (object vs string) + one missed
    s = score_extraction({"contact": "a@b.c, 555"}, {"contact": {"email": "a@b.c", "phone": "555"}}, None)
    assert [(f.path, f.category) for f in s.fields] == [("contact", "incorrect"), ("contact.phone", "missed")]
    assert (s.counts.expected, s.counts.predicted) == (2, 1)
    assert s.type_confusion == {"object": {"string": 1}}


def test_single_value_for_array_gets_jaccard_credit() -> None:
    # "a" read as ["a"] against ["a", "b"]: Jaccard 1/2 → partial, type wrong
    s = score_extraction({"tags": "a"}, {"tags": ["a", "b"]}, None)
    assert (s.fields[0].category, s.fields[0].score) == ("partial", 0.5)
    assert s.type_confusion == {"array": {"string": 1}}


# ---------------------------------------------------------------- nulls, missing and spurious fields


def test_null_or_absent_on_both_sides_is_correct_and_not_counted() -> None:
    expected = {"a": "x", "b": None}
    for predicted in ({"a": "x"}, {"a": "x", "b": None}):
        s = score_extraction(predicted, expected, None)
        assert [f.path for f in s.fields] == ["a"]
        assert s.exact_match and s.eqs == 1.0


def test_value_where_reference_is_null_is_spurious() -> None:
    s = score_extraction({"a": "x", "b": "y"}, {"a": "x", "b": None}, None)
    assert [(f.path, f.category) for f in s.fields] == [("a", "exact"), ("b", "spurious")]
    assert s.hallucination_rate == pytest.approx(0.5)  # 1 spurious of 2 predicted


def test_null_prediction_for_a_value_is_missed() -> None:
    s = score_extraction({"a": None, "b": "y"}, {"a": "x", "b": "y"}, None)
    assert [(f.path, f.category) for f in s.fields] == [("a", "missed"), ("b", "exact")]
    # credit 1, expected 2, predicted 1: P = 1, R = 0.5, F1 = 2·1/3
    assert s.precision("partial") == 1.0
    assert s.recall("partial") == 0.5
    assert s.f1("partial") == pytest.approx(2 / 3)


def test_spurious_value_found_elsewhere_is_misplaced() -> None:
    expected = {"city": "Paris", "country": "France"}
    s = score_extraction({"city": "Paris", "capital": "France"}, expected, None)
    sev = {f.path: f.severity for f in s.fields}
    assert sev == {"city": None, "country": None, "capital": "misplaced"}


def test_spurious_value_in_the_source_text_is_misplaced_else_fabricated() -> None:
    text = "System: Their phone number is 408-247-8880."
    predicted = {"name": "Sino", "phone": "408-247-8880"}
    grounded = score_extraction(predicted, {"name": "Sino"}, None, source_text=text)
    invented = score_extraction(predicted, {"name": "Sino"}, None)
    assert grounded.hallucinations.misplaced == 1 and grounded.hallucinations.fabricated == 0
    assert invented.hallucinations.fabricated == 1 and invented.hallucinations.misplaced == 0


def test_empty_output_renormalises_eqs_over_measured_components() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    s = score_extraction("{}", {"a": "x", "b": "y"}, schema)
    # nothing predicted: precision, type accuracy and hallucination rate cannot be measured
    assert s.precision("partial") is None and s.type_accuracy is None and s.hallucination_rate is None
    assert set(s.null_reasons()) == {
        "field_precision_strict",
        "field_precision_partial",
        "field_precision_lenient",
        "type_accuracy",
        "hallucination_rate",
    }
    # EQS over the measured components: (0.15·1 + 0.50·0) / (0.15 + 0.50) = 0.230769...
    assert s.eqs == pytest.approx(0.15 / 0.65)


# ---------------------------------------------------------------- alternatives


def test_prediction_equal_to_an_alternative_is_exact() -> None:
    expected = {"time": "11:30 am"}
    alternatives = {"time": ["11:30 am", "half past 11 in the morning"]}
    s = score_extraction({"time": "half past 11 in the morning"}, expected, None, alternatives=alternatives)
    (f,) = s.fields
    assert (f.category, f.strict, f.matched_alternative) == ("exact", True, True)
    assert s.exact_match
    # Without the alternative: no shared token, no containment, Levenshtein ≤ 1 − 19/27, so the composite
    # is at most 0.3·8/27 < 0.3: incorrect even in lenient mode.
    plain = score_extraction({"time": "half past 11 in the morning"}, expected, None)
    assert plain.fields[0].category == "incorrect" and not plain.fields[0].lenient


def test_partial_score_takes_the_best_alternative() -> None:
    alternatives = {"name": ["The Big 4"]}
    s = score_extraction({"name": "the big 4"}, {"name": "Big 4"}, None, alternatives=alternatives)
    assert s.fields[0].category == "exact" and s.fields[0].score == 1.0  # lower-cased alternative
    assert not s.fields[0].strict  # case-sensitive strict equality


# ---------------------------------------------------------------- invalid outputs


def test_unparsable_output_is_a_parse_failure_scoring_zero() -> None:
    s = score_extraction('{"name": "John",', PERSON, PERSON_SCHEMA)
    assert (s.parsed, s.schema_valid, s.failure) == (False, False, "parse_error")
    assert s.errors and s.errors[0].startswith("line 1 column")
    assert s.eqs == 0.0
    assert s.f1("partial") == 0.0 and s.precision("strict") == 0.0 and s.type_accuracy == 0.0
    assert s.counts.missed == 6 and s.counts.predicted == 0  # every expected leaf is missed
    assert s.null_reasons() == {"hallucination_rate": "the output is not valid JSON"}


def test_schema_invalid_output_is_distinct_from_a_parse_failure() -> None:
    s = score_extraction('{"name": 5, "age": 35}', PERSON, PERSON_SCHEMA)
    assert (s.parsed, s.schema_valid, s.failure) == (True, False, "schema_invalid")
    assert s.errors == ("$.name: 5 is not of type 'string'",)
    assert s.eqs == 0.0 and s.f1("lenient") == 0.0
    assert s.metric_values()["parsed"] == 1.0 and s.metric_values()["schema_valid"] == 0.0


def test_json_text_variants() -> None:
    fenced = score_extraction('```json\n{"a": "x"}\n```', {"a": "x"}, None)
    assert fenced.parsed and fenced.exact_match
    no_fences = ExtractionOptions(strip_code_fences=False)
    assert score_extraction('```json\n{"a": "x"}\n```', {"a": "x"}, None, options=no_fences).failure == "parse_error"
    assert score_extraction('{"a": NaN}', {"a": 1}, None).failure == "parse_error"
    assert score_extraction("   ", {"a": 1}, None).errors == ("empty output",)


def test_invalid_schema_is_a_user_error() -> None:
    with pytest.raises(ScoregateError, match="invalid JSON Schema"):
        score_extraction({}, {}, {"type": "objekt"})


def test_schemas_are_compiled_once_per_content() -> None:
    first = compile_schema(dict(PERSON_SCHEMA))
    assert compile_schema(dict(PERSON_SCHEMA)) is first  # a different dict with the same content


def test_bad_options_are_rejected_with_a_hint() -> None:
    with pytest.raises(ScoregateError, match="thresholds"):
        ExtractionOptions(exact_threshold=0.4)
    with pytest.raises(ScoregateError, match="EQS weights"):
        EqsWeights(schema_validity=-1)


def test_to_dict_is_json_ready() -> None:
    import json

    s = score_extraction(PERSON_PREDICTED, PERSON, PERSON_SCHEMA)
    d = json.loads(json.dumps(s.to_dict()))
    assert d["metrics"]["eqs"] == pytest.approx(0.685)
    assert d["counts"]["spurious"] == 1
    assert d["complexity"]["bin"] == "medium"  # 6 leaf fields, depth 1
    assert {f["path"] for f in d["fields"]} >= {"contact.phone", "nickname"}


# ---------------------------------------------------------------- aggregation and complexity


def _two_items() -> list[ExtractionScores]:
    # item 1: the worked nested example (expected 6, predicted 6, partial credit 3, EQS 0.685)
    # item 2: unparsable output against a 2-field reference (2 missed, EQS 0)
    return [
        score_extraction(PERSON_PREDICTED, PERSON, PERSON_SCHEMA),
        score_extraction("not json", {"a": "x", "b": "y"}, None),
    ]


def test_micro_fields_and_macro_eqs() -> None:
    agg = aggregate_extraction(_two_items())
    m = agg.metric_values()
    # micro, partial: credit 3, expected 6 + 2 = 8, predicted 6 → P = 0.5, R = 3/8, F1 = 2·3/14
    assert m["field_precision_partial"] == pytest.approx(0.5)
    assert m["field_recall_partial"] == pytest.approx(3 / 8)
    assert m["field_f1_partial"] == pytest.approx(6 / 14)
    # macro F1 partial: (0.5 + 0) / 2
    assert m["macro_field_f1_partial"] == pytest.approx(0.25)
    # macro EQS: (0.685 + 0) / 2
    assert m["eqs"] == pytest.approx(0.3425)
    assert agg.eqs_values == pytest.approx((0.685, 0.0))
    assert (m["schema_validity_rate"], m["parse_failure_rate"], m["schema_failure_rate"]) == (0.5, 0.5, 0.0)
    assert (m["exact_match_rate"], m["exact_match_rate_of_valid"]) == (0.0, 0.0)
    # types: 4 of 5 paired fields; hallucination: 1 spurious of 6 predicted; omission: 3 missed of 8 expected
    assert m["type_accuracy"] == pytest.approx(0.8)
    assert m["hallucination_rate"] == pytest.approx(1 / 6)
    assert m["omission_rate"] == pytest.approx(3 / 8)
    assert agg.hallucinations.to_dict() == {"fabricated": 1, "misplaced": 0, "excess_array_elements": 1}


def test_breakdowns_and_distributions() -> None:
    agg = aggregate_extraction(_two_items())
    depth = agg.breakdowns["depth"]
    # depth 1 holds contact.email (exact) and contact.phone (missed)
    assert (depth["1"].exact, depth["1"].missed, depth["1"].omission_rate()) == (1, 1, 0.5)
    required = agg.breakdowns["required"]
    # required: name, age, contact.email (none missed); optional: city, tags, contact.phone (1 missed);
    # unknown (no schema or not declared): nickname, and item 2's a and b (both missed)
    assert (required["required"].expected, required["required"].missed) == (3, 0)
    assert (required["optional"].expected, required["optional"].missed) == (3, 1)
    assert (required["unknown"].missed, required["unknown"].spurious) == (2, 1)
    assert agg.breakdowns["type"]["number"].partial == 1  # age, keyed by its expected type
    assert agg.breakdowns["field"]["contact.phone"].omission_rate() == 1.0
    # paired scores: name 1.0, age 1.0, email 1.0 (excellent), city 0.84375 (good), tags 0.4 (poor)
    assert agg.score_distribution == {"excellent": 3, "good": 1, "fair": 0, "poor": 1, "very_poor": 0}
    # string pairs: name, city, email; token F1 means (1 + 0.8 + 1) / 3
    assert agg.string_similarity["token_f1"]["mean"] == pytest.approx(2.8 / 3)
    assert agg.complexity_items == {"medium": 1, "unknown": 1}
    assert agg.complexity_eqs == {"medium": pytest.approx(0.685), "unknown": 0.0}


def test_streaming_snapshots_do_not_change_after_more_items() -> None:
    aggregator = ExtractionAggregator()
    first, second = _two_items()
    aggregator.add(first)
    snapshot = aggregator.result()
    aggregator.add(second)
    assert snapshot.items == 1 and snapshot.counts.missed == 1
    assert aggregator.result().items == 2 and aggregator.result().counts.missed == 3


def test_empty_aggregate_is_null_with_reasons() -> None:
    agg = ExtractionAggregator().result()
    assert agg.metric_values()["eqs"] is None
    assert agg.null_reasons()["field_f1_partial"] == "no item was aggregated"


def test_complexity_features_and_bins() -> None:
    c = schema_complexity(PERSON_SCHEMA)
    assert (c.total_fields, c.required_fields, c.optional_fields) == (6, 3, 3)
    # leaf types: string, integer|string, string, array, string, string → {string, integer, array}
    assert (c.max_depth, c.array_fields, c.nested_objects, c.type_diversity) == (1, 1, 1, 3)
    assert c.bin == "medium"
    flat = {"type": "object", "properties": {k: {"type": "string", "enum": ["x"]} for k in "abc"}}
    assert schema_complexity(flat).bin == "simple"
    assert schema_complexity(flat).enum_fields == 3
    wide = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(16)}}
    assert schema_complexity(wide).bin == "complex"  # more than 15 fields
    deep: dict = {"type": "string"}
    for key in "dcba":
        deep = {"type": "object", "properties": {key: deep}}
    assert schema_complexity(deep).max_depth == 3  # a.b.c.d
    assert schema_complexity(deep).bin == "complex"  # deeper than 2


def test_complexity_follows_local_refs() -> None:
    schema = {
        "type": "object",
        "$defs": {"addr": {"type": "object", "properties": {"street": {"type": "string"}}}},
        "properties": {"home": {"$ref": "#/$defs/addr"}, "work": {"$ref": "#/$defs/addr"}},
    }
    c = schema_complexity(schema)
    assert (c.total_fields, c.max_depth, c.nested_objects) == (2, 1, 2)
