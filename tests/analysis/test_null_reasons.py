"""Measured or null: every null statistic in the compare and calibrate JSON carries its reason."""

from __future__ import annotations

from typing import Any

from scoregate.analysis.calibration import calibrate
from scoregate.analysis.paired import compare_many, compare_paired

INPUTS = ("reason", "margin", "non_inferior", "scale", "per_document")
"""Keys that echo what was asked (no margin, no scale...), not statistics that could not be computed."""


def nulls_without_reason(node: Any, path: str = "") -> list[str]:
    """Paths of null statistics (not echoed inputs) in a JSON-ready dict whose object has no `reason`."""
    found: list[str] = []
    if isinstance(node, dict):
        has_reason = node.get("reason") is not None
        for key, value in node.items():
            by_design = key == "p_adjusted" and node.get("role") == "primary"  # Holm adjusts secondary scores only
            if value is None and key not in INPUTS and not has_reason and not by_design:
                found.append(f"{path}.{key}")
            found += nulls_without_reason(value, f"{path}.{key}")
    return found


def test_no_change_at_all_says_why_the_tests_are_null() -> None:
    result = compare_paired([3, 4, 5, 4], [3, 4, 5, 4], resamples=200)

    assert result.wilcoxon_p is None and result.ttest_p is None and result.cohens_dz is None
    assert result.reason is not None and "every paired difference is 0" in result.reason
    assert result.mde is None and "mde" in result.reason  # no MDE of 0: that would claim any Δ is detectable
    assert nulls_without_reason(result.to_dict()) == []


def test_equal_differences_say_why_t_and_dz_are_null() -> None:
    result = compare_paired([3, 4, 5, 4], [4, 5, 6, 5], resamples=200)

    assert result.wilcoxon_p is not None
    assert result.ttest_p is None and result.cohens_dz is None and result.mde is None
    assert result.reason == "every paired difference is 1 (no spread): ttest_p, cohens_dz and mde are undefined"
    assert nulls_without_reason(result.to_dict()) == []


def test_holm_nulls_carry_the_reason_too() -> None:
    pairs = {"same": ([1, 2, 3], [1, 2, 3]), "up": ([1, 2, 3], [2, 4, 5])}
    results = compare_many(pairs, primary=[], resamples=200)  # both secondary: Holm-adjusted

    assert results["same"].p_adjusted is None and results["same"].reason is not None
    assert results["up"].p_adjusted is not None
    for result in results.values():
        assert nulls_without_reason(result.to_dict()) == []


def test_a_per_document_ci_from_a_single_document_says_why_it_is_null() -> None:
    judge = [1, 2, 3, 4, 2, 2, 2]
    human = [1, 3, 3, 5, 1, 2, 3]
    documents = ["d1", "d1", "d1", "d1", "d2", "d2", "d2"]  # d2: the judge is constant, so it is skipped

    result = calibrate(judge, human, documents=documents, resamples=200).to_dict()

    per_document = result["per_document"]
    assert per_document["documents_used"] == 1
    spearman = per_document["spearman"]
    assert spearman["value"] is not None and spearman["ci_low"] is None
    assert spearman["reason"] == "only 1 document: a confidence interval needs at least 2"
    assert nulls_without_reason(result) == []
