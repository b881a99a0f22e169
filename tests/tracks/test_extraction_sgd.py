"""Extraction metrics over the real Schema-Guided Dialogue items (../shared/data/sgd_extraction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoregate.tracks.extraction.metrics import ExtractionAggregator, score_extraction

SGD = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sgd_extraction" / "sgd_extraction.jsonl"

pytestmark = pytest.mark.skipif(not SGD.is_file(), reason=f"real SGD data not found at {SGD}")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    with SGD.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _dontcare_in_enum(row: dict[str, Any]) -> bool:
    """SGD's "dontcare" slot value is outside the enums the mechanically derived schemas list."""
    props = row["json_schema"]["properties"]
    return any(
        v == "dontcare" and "dontcare" not in props[k].get("enum", ["dontcare"]) for k, v in row["expected"].items()
    )


def _score(output: Any, row: dict[str, Any]) -> Any:
    return score_extraction(
        output, row["expected"], row["json_schema"], alternatives=row["expected_alternatives"], source_text=row["text"]
    )


def test_each_reference_scored_against_itself_is_perfect(rows: list[dict[str, Any]]) -> None:
    assert len(rows) == 170
    failed = []
    for row in rows:
        s = _score(json.dumps(row["expected"]), row)
        if s.failure is not None:
            failed.append(row["id"])
            assert s.failure == "schema_invalid" and "'dontcare' is not one of" in s.errors[0]
            continue
        assert (s.f1("strict"), s.f1("partial"), s.f1("lenient"), s.eqs) == (1.0, 1.0, 1.0, 1.0), row["id"]
        assert s.exact_match and s.counts.expected == len(row["expected"])
    # The only references their own schema rejects are the three with "dontcare" in an enum slot.
    assert failed == [row["id"] for row in rows if _dontcare_in_enum(row)]
    assert len(failed) == 3


def test_every_alternative_surface_form_is_an_exact_match(rows: list[dict[str, Any]]) -> None:
    checked = 0
    for row in rows:
        if _dontcare_in_enum(row):
            continue
        for path, alternatives in row["expected_alternatives"].items():
            for alternative in alternatives:
                if alternative == row["expected"][path]:
                    continue
                s = _score({**row["expected"], path: alternative}, row)
                assert s.exact_match and s.eqs == 1.0, (row["id"], path, alternative)
                checked += 1
    assert checked > 100


def test_dropping_a_field_and_changing_a_value_lowers_the_right_counts(rows: list[dict[str, Any]]) -> None:
    checked = 0
    for row in rows:
        expected, props = row["expected"], row["json_schema"]["properties"]
        free = [k for k in expected if "enum" not in props[k]]
        if _dontcare_in_enum(row) or len(expected) < 2 or not free:
            continue
        changed = free[0]
        dropped = next(k for k in expected if k != changed)
        predicted = {k: v for k, v in expected.items() if k != dropped}
        predicted[changed] = "Qwzx Vvq"
        s = _score(predicted, row)
        n = len(expected)
        by_path = {f.path: f for f in s.fields}
        assert s.valid and by_path[dropped].category == "missed"
        assert by_path[changed].category != "exact" and not by_path[changed].strict
        c = s.counts
        assert (c.missed, c.spurious, c.expected, c.predicted, c.strict) == (1, 0, n, n - 1, n - 2)
        # strict credit n − 2 over expected n and predicted n − 1: F1 = 2(n − 2) / (2n − 1)
        assert s.f1("strict") == pytest.approx(2 * (n - 2) / (2 * n - 1))
        assert s.eqs is not None and s.eqs < 1.0 and not s.exact_match
        checked += 1
    assert checked > 100


def test_aggregate_over_the_real_items(rows: list[dict[str, Any]]) -> None:
    aggregator = ExtractionAggregator()
    for row in rows:
        aggregator.add(_score(row["expected"], row))
    agg = aggregator.result()
    m = agg.metric_values()
    assert agg.items == 170 and agg.schema_failures == 3
    assert m["schema_validity_rate"] == pytest.approx(167 / 170)
    assert m["eqs"] == pytest.approx(167 / 170)  # 167 perfect items and 3 invalid ones at 0
    assert m["field_precision_strict"] == 1.0  # invalid outputs predict nothing
    missed = sum(len(row["expected"]) for row in rows if _dontcare_in_enum(row))
    assert agg.counts.missed == missed and m["hallucination_rate"] == 0.0
    assert set(agg.complexity_items) <= {"simple", "medium", "complex"}
