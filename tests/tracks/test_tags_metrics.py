"""Tags-track metrics against hand-computed values: micro F1, normalisation, severity weights, action matching."""

from __future__ import annotations

import numpy as np
import pytest

from scoregate.tracks.tags.metrics import (
    Action,
    Counts,
    Risk,
    TagLabels,
    action_similarity,
    match_actions,
    micro_metrics,
    read_labels,
    risk_counts,
    score_sample,
)
from scoregate.tracks.tags.metrics.scores import _micro_from_sums


def labels(topics: list[str] = (), risks: list[tuple[str, str]] = (), actions: list[str] = ()) -> TagLabels:  # type: ignore[assignment]
    return read_labels(
        {
            "topics": list(topics),
            "risks": [{"type": t, "severity": s} for t, s in risks],
            "actions": [{"description": a} for a in actions],
        }
    )


def test_topic_micro_f1_sums_counts_over_samples_not_per_sample_f1() -> None:
    a = score_sample(labels(["pricing", "billing", "refund"]), labels(["pricing", "billing"]))
    b = score_sample(labels(["setup"]), labels(["setup", "integration", "training"]))
    assert a.counts["topic"] == Counts(2, 1, 0) and b.counts["topic"] == Counts(1, 0, 2)
    assert a.values["topic_f1"] == pytest.approx(0.8) and b.values["topic_f1"] == pytest.approx(0.5)
    micro = micro_metrics([a.counts, b.counts], resamples=200)
    assert micro["topic_precision"].value == pytest.approx(3 / 4)
    assert micro["topic_recall"].value == pytest.approx(3 / 5)
    assert micro["topic_f1"].value == pytest.approx(6 / 9)  # 2·3 / (2·3 + 1 + 2); the mean of per-sample F1 is 0.65


def test_labels_are_normalised_and_a_label_outside_the_vocabulary_is_counted() -> None:
    predicted = read_labels({"topics": ["Pricing", "tech support", "Bug-Report", "Refunds", "weather"]})
    assert predicted.topics == ("pricing", "technical_support", "bug_report", "refund", "weather")
    assert predicted.outside_vocabulary == ("topic:weather",)
    sample = score_sample(predicted, labels(["pricing", "technical_support", "bug_report", "refund"]))
    assert sample.counts["topic"] == Counts(4, 1, 0)
    assert sample.detail()["outside_vocabulary"] == ["topic:weather"]
    risks = read_labels({"risks": [{"type": "Churn", "severity": "Urgent"}, {"type": "weather", "severity": "x"}]})
    assert risks.risks == (Risk("churn_risk", "critical"), Risk("weather", "x"))
    assert risks.outside_vocabulary == ("risk:weather", "severity:x")


def test_risk_type_only_type_and_severity_and_severity_weighted() -> None:
    gold = [Risk("escalation", "critical"), Risk("churn_risk", "low"), Risk("compliance", "high")]
    predicted = [Risk("escalation", "critical"), Risk("churn_risk", "high"), Risk("sentiment_negative", "medium")]
    by_type, by_severity, weighted = risk_counts(predicted, gold)
    assert by_type == Counts(2, 1, 1)
    assert by_severity == Counts(1, 2, 2)
    # TP escalation:critical = 4; FP churn:high 2 + sentiment:medium 1 = 3; FN churn:low 0.5 + compliance:high 2
    assert weighted == Counts(4.0, 3.0, 2.5)
    sample = score_sample(TagLabels(risks=tuple(predicted)), TagLabels(risks=tuple(gold)))
    assert sample.values["risk_f1"] == pytest.approx(2 / 3)
    assert sample.values["risk_severity_f1"] == pytest.approx(1 / 3)
    assert sample.values["risk_weighted_precision"] == pytest.approx(4 / 7)
    assert sample.values["risk_weighted_recall"] == pytest.approx(4 / 6.5)
    assert sample.values["risk_weighted_f1"] == pytest.approx(8 / 13.5)
    rows = {(m.predicted, m.gold): (m.type_match, m.severity_match) for m in sample.risk_matches}
    assert rows == {
        ("escalation:critical", "escalation:critical"): (True, True),
        ("churn_risk:high", "churn_risk:low"): (True, False),
        (None, "compliance:high"): (False, False),
        ("sentiment_negative:medium", None): (False, False),
    }


@pytest.mark.parametrize(
    ("predicted", "similarity", "matched"),
    [
        ("abcdefghij", 1.0, True),
        ("Abcdefgh-ij!", 1.0, True),  # case and punctuation are normalised away
        ("abcdefghXY", 0.8, True),  # exactly at the threshold: 2 edits in 10
        ("abcdefgXYZ", 0.7, False),  # 3 edits in 10
    ],
)
def test_action_matching_at_and_around_the_threshold(predicted: str, similarity: float, matched: bool) -> None:
    assert action_similarity(predicted, "abcdefghij") == pytest.approx(similarity)
    rows = match_actions([Action(predicted)], [Action("abcdefghij")])
    assert rows[0].matched is matched and rows[0].similarity == pytest.approx(similarity)
    assert len(rows) == (1 if matched else 2)  # an unmatched prediction gets its own row (a false positive)


def test_action_just_below_and_above_the_threshold() -> None:
    assert action_similarity("abcdefgXY", "abcdefghi") == pytest.approx(1 - 2 / 9)  # 0.778: no match
    assert not match_actions([Action("abcdefgXY")], [Action("abcdefghi")])[0].matched
    assert action_similarity("abcdefghiXY", "abcdefghijk") == pytest.approx(1 - 2 / 11)  # 0.818: a match
    assert match_actions([Action("abcdefghiXY")], [Action("abcdefghijk")])[0].matched


def test_actions_match_one_to_one_maximising_the_number_of_matches() -> None:
    # Two predictions for one gold action: one matches, the other is a false positive.
    sample = score_sample(
        TagLabels(actions=(Action("abcdefghij"), Action("abcdefghiX"))), TagLabels(actions=(Action("abcdefghij"),))
    )
    assert sample.counts["action"] == Counts(1, 1, 0)
    assert sample.values["action_accuracy"] == 1.0 and sample.values["action_precision"] == 0.5
    # Greedy (best pair first) would pair P1-G1 (1.0) and leave P2-G2 at 0.7; the assignment finds two matches.
    g1, g2 = Action("aaaaaaaaaa"), Action("aaaaaaaabb")
    p1, p2 = Action("aaaaaaaaaa"), Action("aaaaaaacaa")
    assert action_similarity(p1.description, g2.description) == pytest.approx(0.8)
    assert action_similarity(p2.description, g1.description) == pytest.approx(0.9)
    assert action_similarity(p2.description, g2.description) == pytest.approx(0.7)
    rows = match_actions([p1, p2], [g1, g2])
    assert [(r.gold, r.predicted, r.matched) for r in rows] == [
        ("aaaaaaaaaa", "aaaaaaacaa", True),
        ("aaaaaaaabb", "aaaaaaaaaa", True),
    ]


def test_null_with_a_reason_only_when_nothing_is_on_either_side() -> None:
    sample = score_sample(labels(), labels(["billing"]))
    assert sample.values["topic_recall"] == 0.0 and sample.values["topic_f1"] == 0.0
    assert sample.values["topic_precision"] is None and sample.reasons["topic_precision"] == "no predicted topics"
    assert sample.values["risk_f1"] is None and sample.reasons["risk_f1"] == "neither gold nor prediction has risks"
    unreadable = read_labels("not json at all")
    assert unreadable.problem and score_sample(unreadable, labels(["billing"])).values["topic_recall"] == 0.0


def test_micro_ci_resamples_samples_and_recomputes_the_micro_value() -> None:
    samples = [
        score_sample(labels(["pricing"]), labels(["pricing"])).counts,
        score_sample(labels(["billing", "refund"]), labels(["billing"])).counts,
        score_sample(labels([]), labels(["setup", "training"])).counts,
        score_sample(labels(["delivery"]), labels(["delivery", "returns"])).counts,
    ]
    micro = micro_metrics(samples, resamples=500, seed=7, confidence=0.9)
    arr = np.array([[s["topic"].tp, s["topic"].fp, s["topic"].fn] for s in samples])
    draws = np.random.default_rng(7).integers(0, 4, size=(500, 4))
    sums = arr[draws].sum(axis=1)
    dist = _micro_from_sums(sums[:, 0], sums[:, 1], sums[:, 2], "f1")
    dist = dist[~np.isnan(dist)]
    assert micro["topic_f1"].value == pytest.approx(2 * 3 / (2 * 3 + 1 + 3))
    assert micro["topic_f1"].ci_low == pytest.approx(np.quantile(dist, 0.05))
    assert micro["topic_f1"].ci_high == pytest.approx(np.quantile(dist, 0.95))
    assert micro["topic_f1"].ci_low < micro["topic_f1"].value < micro["topic_f1"].ci_high
    assert micro["topic_precision"].samples_measured == 4  # every scored sample counts
    empty = micro_metrics([])
    assert empty["topic_f1"].value is None and empty["topic_f1"].reason == "no scored samples"
