"""Value comparison: JSON types, strict equality under the options, and per-type partial scores in [0, 1]."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

from scoregate.tracks.extraction.metrics.options import ExtractionOptions

JsonType = Literal["string", "number", "boolean", "null", "object", "array", "other"]


def json_type(value: Any) -> JsonType:
    """Return the JSON type of a parsed value (int and float are both `number`)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "other"


@dataclass(frozen=True, slots=True)
class StringSimilarity:
    """The three string strategies and their weighted composite, each in [0, 1]."""

    token_f1: float
    levenshtein: float
    containment: float
    composite: float


def _norm_text(text: str, *, fold_case: bool, collapse: bool) -> str:
    if collapse:
        text = " ".join(text.split())
    return text.casefold() if fold_case else text


def value_key(value: Any, options: ExtractionOptions, *, loose: bool) -> Hashable:
    """Return a hashable key of a value: equal keys mean equal values (loose: ignoring case and spacing)."""
    kind = json_type(value)
    if kind == "string":
        fold = loose or not options.case_sensitive
        return ("s", _norm_text(value, fold_case=fold, collapse=loose or options.normalize_whitespace))
    if kind == "number":
        return ("n", float(value))
    if kind == "object":
        items = ((k, value_key(v, options, loose=loose)) for k, v in value.items() if v is not None)
        return ("o", tuple(sorted(items, key=repr)))
    if kind == "array":
        keys = [value_key(v, options, loose=loose) for v in value]
        if loose or not options.array_order_matters:
            keys.sort(key=repr)
        return ("a", tuple(keys))
    return (kind, value if kind == "boolean" else repr(value))


def strict_equal(expected: Any, predicted: Any, options: ExtractionOptions) -> bool:
    """True when both values have the same JSON type and are equal under the options."""
    kind = json_type(expected)
    if kind != json_type(predicted):
        return False
    if kind == "string":
        fold = not options.case_sensitive
        collapse = options.normalize_whitespace
        return _norm_text(expected, fold_case=fold, collapse=collapse) == _norm_text(
            predicted, fold_case=fold, collapse=collapse
        )
    if kind == "number":
        eps = options.float_epsilon
        return math.isclose(expected, predicted, rel_tol=eps, abs_tol=eps)
    if kind == "array":
        if len(expected) != len(predicted):
            return False
        if options.array_order_matters:
            return all(strict_equal(e, p, options) for e, p in zip(expected, predicted, strict=True))
        return value_key(expected, options, loose=False) == value_key(predicted, options, loose=False)
    if kind == "object":
        e_keys = {k for k, v in expected.items() if v is not None}
        p_keys = {k for k, v in predicted.items() if v is not None}
        return e_keys == p_keys and all(strict_equal(expected[k], predicted[k], options) for k in e_keys)
    return bool(expected == predicted)


def string_similarity(expected: str, predicted: str, options: ExtractionOptions) -> StringSimilarity:
    """Score two strings: token-overlap F1, normalised Levenshtein similarity and containment, lower-cased."""
    e = " ".join(expected.lower().split())
    p = " ".join(predicted.lower().split())
    e_tokens, p_tokens = set(e.split()), set(p.split())
    shared = len(e_tokens & p_tokens)
    token_f1 = 2 * shared / (len(e_tokens) + len(p_tokens)) if shared else 0.0
    levenshtein = 1.0 if e == p else Levenshtein.normalized_similarity(e, p)
    if e and e in p:
        containment = 1.0
    elif p and p in e:
        containment = len(p) / len(e)
    else:
        containment = float(e == p)
    w_tok, w_lev, w_con = options.string_weights
    composite = (w_tok * token_f1 + w_lev * levenshtein + w_con * containment) / (w_tok + w_lev + w_con)
    return StringSimilarity(token_f1, levenshtein, containment, composite)


def number_similarity(expected: float, predicted: float) -> float:
    """Return 1 − relative difference, floored at 0 (an expected 0 needs an exact 0)."""
    if expected == 0:
        return 1.0 if predicted == 0 else 0.0
    return max(0.0, 1.0 - abs(predicted - expected) / abs(expected))


def array_jaccard(
    expected: list[Any] | tuple[Any, ...], predicted: list[Any] | tuple[Any, ...], options: ExtractionOptions
) -> float:
    """Return the Jaccard similarity |E ∩ P| / |E ∪ P| of two arrays' elements (1.0 when both are empty).

    Elements compare under the options (`case_sensitive`, `normalize_whitespace`, `float_epsilon` via
    the canonical key). By default the arrays are sets, as the extraction specification defines it;
    `array_multiset` counts repeated elements.
    """
    e_keys = Counter(value_key(v, options, loose=False) for v in expected)
    p_keys = Counter(value_key(v, options, loose=False) for v in predicted)
    if not options.array_multiset:
        e_set, p_set = set(e_keys), set(p_keys)
        union_size = len(e_set | p_set)
        return len(e_set & p_set) / union_size if union_size else 1.0
    shared = sum((e_keys & p_keys).values())
    union = sum((e_keys | p_keys).values())
    return shared / union if union else 1.0


def value_text(value: Any) -> str:
    """Return the text a value would be written as (42.0 → "42", True → "true")."""
    kind = json_type(value)
    if kind == "string":
        return str(value)
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "number":
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return repr(value)


def _as_number(text: str) -> float | None:
    try:
        number = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _coerced_similarity(
    expected: Any, predicted: Any, options: ExtractionOptions
) -> tuple[float, StringSimilarity | None]:
    e_kind, p_kind = json_type(expected), json_type(predicted)
    if "object" in (e_kind, p_kind):
        return 0.0, None
    if e_kind == "array" or p_kind == "array":
        e_list = expected if e_kind == "array" else [expected]
        p_list = predicted if p_kind == "array" else [predicted]
        return array_jaccard(e_list, p_list, options), None
    if e_kind == "number" and p_kind == "string":
        number = _as_number(predicted)
        return (number_similarity(expected, number), None) if number is not None else (0.0, None)
    if e_kind == "string" and p_kind == "number":
        number = _as_number(expected)
        if number is not None:
            return number_similarity(number, predicted), None
    sim = string_similarity(value_text(expected), value_text(predicted), options)
    return sim.composite, sim


def similarity(expected: Any, predicted: Any, options: ExtractionOptions) -> tuple[float, StringSimilarity | None]:
    """Return the composite partial score in [0, 1] of two non-null values (and string details, for strings)."""
    kind = json_type(expected)
    if kind != json_type(predicted):
        return _coerced_similarity(expected, predicted, options) if options.type_coercion else (0.0, None)
    if kind == "string":
        sim = string_similarity(expected, predicted, options)
        return sim.composite, sim
    if kind == "number":
        return number_similarity(expected, predicted), None
    if kind == "array":
        return array_jaccard(expected, predicted, options), None
    if kind == "object":
        return object_similarity(expected, predicted, options), None
    return float(expected == predicted), None


def object_similarity(expected: Mapping[str, Any], predicted: Mapping[str, Any], options: ExtractionOptions) -> float:
    """Return the mean partial score over the union of non-null keys (a key on one side only scores 0)."""
    keys = {k for k, v in expected.items() if v is not None} | {k for k, v in predicted.items() if v is not None}
    if not keys:
        return 1.0
    total = 0.0
    for key in keys:
        e, p = expected.get(key), predicted.get(key)
        if e is not None and p is not None:
            total += 1.0 if strict_equal(e, p, options) else similarity(e, p, options)[0]
    return total / len(keys)
