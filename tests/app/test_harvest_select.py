"""The harvest strategies order production traces as stated, and near-duplicates are dropped at the threshold."""

from __future__ import annotations

from typing import Any

from scoregate.app.harvest_select import Candidate, canonical_text, drop_near_duplicates, order


def _c(trace: str, scores: dict[str, Any], text: str = "", day: str = "2026-11-29", prompt: str = "p@1") -> Candidate:
    return Candidate(trace, f"{day}T10:00:00Z", prompt, {"q": text or trace}, {}, scores)


def test_lowest_puts_the_lowest_scored_first_and_unscored_last() -> None:
    found = [_c("high", {"a": 5, "b": 5}), _c("low", {"a": 1, "b": 2}), _c("none", {}), _c("mid", {"a": 3, "b": 3})]
    assert [c.trace_id for c in order(found, "lowest", [], 0)] == ["low", "mid", "high", "none"]


def test_disagreement_puts_the_trace_whose_judges_differ_most_first() -> None:
    found = [_c("agree", {"a": 3, "b": 3}), _c("split", {"a": 5, "b": 1}), _c("close", {"a": 4, "b": 2})]
    assert order(found, "disagreement", [], 0, {"a": (1, 5), "b": (1, 5)})[0].trace_id == "split"


def test_uncovered_puts_the_trace_least_like_any_item_first() -> None:
    existing = [canonical_text({"q": "how do I reset my password"})]
    found = [_c("same", {}, "how do I reset my password?"), _c("other", {}, "cancel the annual plan today")]
    assert [c.trace_id for c in order(found, "uncovered", existing, 0)] == ["other", "same"]


def test_stratified_alternates_between_days_and_prompt_versions() -> None:
    found = [_c(f"d1-{i}", {}, day="2026-11-28") for i in range(3)] + [
        _c(f"d2-{i}", {}, day="2026-11-29") for i in range(3)
    ]
    first_two = [c.timestamp[:10] for c in order(found, "stratified", [], 7)[:2]]
    assert sorted(first_two) == ["2026-11-28", "2026-11-29"]
    assert order(found, "stratified", [], 7) == order(found, "stratified", [], 7)


def test_near_duplicates_of_items_and_of_each_other_are_dropped_with_the_reason() -> None:
    existing = [canonical_text({"q": "how do I reset my password"})]
    found = [_c("x", {}, "how do I reset my password!"), _c("y", {}, "cancel my plan"), _c("z", {}, "cancel my plan.")]
    kept, dropped = drop_near_duplicates(found, existing, 90, 10)
    assert [c.trace_id for c in kept] == ["y"]
    assert [t for t, _ in dropped] == ["x", "z"]
    assert "dataset item" in dropped[0][1] and "another proposal" in dropped[1][1]
    kept_all, _ = drop_near_duplicates(found, existing, 100.1, 10)
    assert len(kept_all) == 3
