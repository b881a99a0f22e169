"""Field-by-field comparison of an output with its reference: one FieldResult per expected or predicted leaf.

Objects are walked into (a leaf's path joins keys with dots, depth 0 is top level); arrays are leaves.
Null and absent are the same on both sides: a field null or absent in both is correct and not counted.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.tracks.extraction.metrics.counts import FieldCounts
from scoregate.tracks.extraction.metrics.options import ExtractionOptions
from scoregate.tracks.extraction.metrics.similarity import (
    JsonType,
    StringSimilarity,
    json_type,
    similarity,
    strict_equal,
    value_key,
    value_text,
)

Category = Literal["exact", "partial", "incorrect", "missed", "spurious"]
Severity = Literal["fabricated", "misplaced"]
ROOT_PATH = "$"

_EXACT_STRINGS = StringSimilarity(1.0, 1.0, 1.0, 1.0)


class _Absent:
    """Marks a key that is not there (distinct from a JSON null, which is treated the same way)."""


_ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class FieldResult:
    """The outcome of one field: its category, composite score and types, and for spurious ones, severity."""

    path: str
    category: Category
    score: float
    """Composite partial score in [0, 1]; 0 for missed and spurious fields."""
    depth: int
    expected_type: JsonType | None
    predicted_type: JsonType | None
    required: bool | None = None
    """From the schema: None when there is no schema or it does not declare this path."""
    strict: bool = False
    """Equal under the options (value and type), to the reference or one of its alternatives."""
    lenient: bool = False
    """Paired and scoring at least the lenient threshold (full credit in lenient mode)."""
    matched_alternative: bool = False
    severity: Severity | None = None
    """Spurious fields only: misplaced (value found elsewhere in the reference or source text) or fabricated."""
    excess_elements: int = 0
    """Predicted array elements beyond the expected array's length."""
    string_similarity: StringSimilarity | None = None
    expected: Any = None
    predicted: Any = None

    @property
    def type_correct(self) -> bool | None:
        """Whether the predicted type equals the expected type; None unless the field is paired."""
        if self.expected_type is None or self.predicted_type is None:
            return None
        return self.expected_type == self.predicted_type

    def to_dict(self) -> dict[str, Any]:
        """Return the field outcome as a plain, JSON-ready dict."""
        sim = self.string_similarity
        return {
            "path": self.path,
            "category": self.category,
            "score": self.score,
            "depth": self.depth,
            "expected_type": self.expected_type,
            "predicted_type": self.predicted_type,
            "type_correct": self.type_correct,
            "required": self.required,
            "strict": self.strict,
            "lenient": self.lenient,
            "matched_alternative": self.matched_alternative,
            "severity": self.severity,
            "excess_elements": self.excess_elements,
            "string_similarity": None
            if sim is None
            else {"token_f1": sim.token_f1, "levenshtein": sim.levenshtein, "containment": sim.containment},
            "expected": self.expected,
            "predicted": self.predicted,
        }


def tally(fields: Sequence[FieldResult]) -> FieldCounts:
    """Count field outcomes by category, with the strict and lenient refinements."""
    counts = FieldCounts()
    add_to_counts(counts, fields)
    return counts


def add_to_counts(counts: FieldCounts, fields: Sequence[FieldResult]) -> None:
    """Add each field's outcome into `counts`."""
    for f in fields:
        if f.category == "exact":
            counts.exact += 1
        elif f.category == "partial":
            counts.partial += 1
        elif f.category == "incorrect":
            counts.incorrect += 1
            counts.weak += f.lenient
        elif f.category == "missed":
            counts.missed += 1
        else:
            counts.spurious += 1
        counts.strict += f.strict


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _absent(value: Any) -> bool:
    return value is _ABSENT or value is None


def _leaves(value: Any, path: str, depth: int) -> Iterator[tuple[str, int, Any]]:
    if value is None or value is _ABSENT:
        return
    if isinstance(value, Mapping):
        for key, child in value.items():
            yield from _leaves(child, _join(path, key), depth + 1)
        return
    yield path or ROOT_PATH, max(depth, 0), value


@dataclass(slots=True)
class _Walker:
    options: ExtractionOptions
    alternatives: Mapping[str, Sequence[Any]]
    required: Mapping[str, bool] | None
    expected_root: Any
    source_text: str | None
    fields: list[FieldResult] = field(default_factory=list)
    _grounded_keys: set[Hashable] | None = None

    def walk(self, exp: Any, pred: Any, path: str, depth: int) -> None:
        e_absent, p_absent = _absent(exp), _absent(pred)
        if e_absent and p_absent:
            return
        e_obj, p_obj = isinstance(exp, Mapping), isinstance(pred, Mapping)
        if e_obj and p_obj:
            for key, value in exp.items():
                self.walk(value, pred.get(key, _ABSENT), _join(path, key), depth + 1)
            for key, value in pred.items():
                if key not in exp:
                    self.walk(_ABSENT, value, _join(path, key), depth + 1)
            return
        if e_absent:
            for leaf in _leaves(pred, path, depth):
                self._spurious(*leaf)
            return
        if p_absent:
            for leaf in _leaves(exp, path, depth):
                self._missed(*leaf)
            return
        # A structure confusion (object vs scalar or array) pairs once; the object's other leaves go unpaired.
        e_leaves = list(_leaves(exp, path, depth)) if e_obj else []
        p_leaves = list(_leaves(pred, path, depth)) if p_obj else []
        if (e_obj and not e_leaves) or (p_obj and not p_leaves):
            self.walk(_ABSENT if e_obj else exp, _ABSENT if p_obj else pred, path, depth)
            return
        self._pair(exp, pred, path or ROOT_PATH, max(depth, 0))
        for leaf in e_leaves[1:]:
            self._missed(*leaf)
        for leaf in p_leaves[1:]:
            self._spurious(*leaf)

    def _required(self, path: str) -> bool | None:
        return None if self.required is None else self.required.get(path)

    def _pair(self, exp: Any, pred: Any, path: str, depth: int) -> None:
        opts = self.options
        candidates = [exp, *(alt for alt in self.alternatives.get(path, ()) if alt is not None)]
        chosen, score, sim = exp, 0.0, None
        strict = False
        for candidate in candidates:
            if strict_equal(candidate, pred, opts):
                chosen, score, strict = candidate, 1.0, True
                sim = _EXACT_STRINGS if isinstance(pred, str) else None
                break
        if not strict:
            for candidate in candidates:
                cand_score, cand_sim = similarity(candidate, pred, opts)
                if cand_score > score or (cand_score == score and sim is None and cand_sim is not None):
                    chosen, score, sim = candidate, cand_score, cand_sim
        e_type, p_type = json_type(chosen), json_type(pred)
        if strict or (e_type == p_type and score >= opts.exact_threshold):
            category: Category = "exact"
        elif score >= opts.partial_threshold:
            category = "partial"
        else:
            category = "incorrect"
        excess = 0
        if p_type == "array":
            excess = max(0, len(pred) - (len(chosen) if e_type == "array" else 1))
        self.fields.append(
            FieldResult(
                path=path,
                category=category,
                score=score,
                depth=depth,
                expected_type=e_type,
                predicted_type=p_type,
                required=self._required(path),
                strict=strict,
                lenient=score >= opts.lenient_threshold,
                matched_alternative=chosen is not exp,
                excess_elements=excess,
                string_similarity=sim,
                expected=exp,
                predicted=pred,
            )
        )

    def _missed(self, path: str, depth: int, value: Any) -> None:
        self.fields.append(
            FieldResult(
                path=path,
                category="missed",
                score=0.0,
                depth=depth,
                expected_type=json_type(value),
                predicted_type=None,
                required=self._required(path),
                expected=value,
            )
        )

    def _spurious(self, path: str, depth: int, value: Any) -> None:
        self.fields.append(
            FieldResult(
                path=path,
                category="spurious",
                score=0.0,
                depth=depth,
                expected_type=None,
                predicted_type=json_type(value),
                required=self._required(path),
                severity="misplaced" if self._grounded(value) else "fabricated",
                predicted=value,
            )
        )

    def _grounded(self, value: Any) -> bool:
        """True when the value appears elsewhere in the reference (or its alternatives) or in the source text."""
        if self._grounded_keys is None:
            keys: set[Hashable] = set()
            for path, _, leaf in _leaves(self.expected_root, "", -1):
                for candidate in (leaf, *self.alternatives.get(path, ())):
                    keys.add(value_key(candidate, self.options, loose=True))
                    if isinstance(candidate, list | tuple):
                        keys.update(value_key(v, self.options, loose=True) for v in candidate)
            self._grounded_keys = keys
        if value_key(value, self.options, loose=True) in self._grounded_keys:
            return True
        if isinstance(value, list | tuple):
            return bool(value) and all(self._grounded(v) for v in value)
        if self.source_text and not isinstance(value, Mapping):
            text = " ".join(value_text(value).lower().split())
            return bool(text) and text in self.source_text
        return False


def compare_fields(
    expected: Any,
    predicted: Any,
    options: ExtractionOptions,
    *,
    alternatives: Mapping[str, Sequence[Any]] | None = None,
    required: Mapping[str, bool] | None = None,
    source_text: str | None = None,
) -> list[FieldResult]:
    """Pair the leaves of a reference and an output and classify each: exact, partial, incorrect, missed, spurious.

    `alternatives` maps a field path to other acceptable values (a prediction equal to one is exact);
    `required` maps leaf paths to the schema's required flag; `source_text` lets a spurious value found in
    the input count as misplaced rather than fabricated.
    """
    walker = _Walker(
        options=options,
        alternatives=alternatives or {},
        required=required,
        expected_root=expected,
        source_text=" ".join(source_text.lower().split()) if source_text else None,
    )
    walker.walk(expected, predicted, "", -1)
    return walker.fields
