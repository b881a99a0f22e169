"""Judge-vs-human calibration: hand-worked agreement, undefined cases, and real SummEval / UniEval data."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from scoregate.analysis.calibration import calibrate, quadratic_weighted_kappa

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SUMMEVAL = DATA / "summeval" / "summeval_rouge_scores.jsonl"
UNIEVAL = DATA / "unieval" / "unieval_predict"


def test_hand_worked_agreement_on_a_three_point_scale() -> None:
    # judge = [1, 2, 3, 3], human = [1, 2, 2, 3] on scale 1..3; weights w_ij = (i - j)² / (3 - 1)².
    # Observed counts (judge rows, human columns): (1,1)=1 (2,2)=1 (3,2)=1 (3,3)=1
    #   → Σ w·O = w(3,2)·1 = 0.25.
    # Marginals: judge [1, 1, 2], human [1, 2, 1], n = 4; expected E_ij = judge_i · human_j / 4:
    #   row 1: [.25, .5, .25] · w [0, .25, 1] = 0.375
    #   row 2: [.25, .5, .25] · w [.25, 0, .25] = 0.125
    #   row 3: [.5, 1, .5]    · w [1, .25, 0]  = 0.75      → Σ w·E = 1.25
    # κ = 1 − 0.25 / 1.25 = 0.8. Exact agreement 3/4, within ±1 4/4, MAE 1/4.
    judge, human = [1.0, 2.0, 3.0, 3.0], [1.0, 2.0, 2.0, 3.0]
    pooled = calibrate(judge, human, scale=(1, 3), resamples=200).pooled
    assert pooled.qwk.value == pytest.approx(0.8)
    assert pooled.exact.value == 0.75
    assert pooled.within_one.value == 1.0
    assert pooled.mae.value == 0.25


def test_qwk_agrees_with_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    judge = rng.integers(1, 6, size=200)
    human = np.clip(judge + rng.integers(-2, 3, size=200), 1, 5)
    expected = metrics.cohen_kappa_score(judge, human, weights="quadratic")
    assert quadratic_weighted_kappa(judge, human, (1, 5)) == pytest.approx(expected)
    assert quadratic_weighted_kappa([1, 3, 5], [1, 3, 5], (1, 5)) == pytest.approx(1.0)


def test_ratings_round_half_up_and_must_lie_on_the_scale() -> None:
    pooled = calibrate([2.5, 3.49, 1.0], [3.0, 3.0, 1.0], scale=(1, 5), resamples=50).pooled
    assert pooled.exact.value == 1.0
    with pytest.raises(ValueError, match=r"judge value 5\.6"):
        calibrate([5.6, 3.0], [5.0, 3.0], scale=(1, 5))
    with pytest.raises(ValueError, match="scale"):
        calibrate([1.0, 2.0], [1.0, 2.0], scale=(5, 1))


def test_constant_scores_give_none_with_a_reason_not_nan_or_zero() -> None:
    result = calibrate([3.0] * 6, [1.0, 2.0, 3.0, 4.0, 5.0, 4.0], scale=(1, 5), resamples=100)
    for estimate in (result.pooled.spearman, result.pooled.kendall, result.pooled.pearson):
        assert (estimate.value, estimate.ci_low, estimate.ci_high) == (None, None, None)
        assert estimate.reason == "judge scores are constant: correlation is undefined"
    assert result.pooled.mae.value == pytest.approx(np.mean([2, 1, 0, 1, 2, 1]))
    both_same = calibrate([4.0] * 5, [4.0] * 5, scale=(1, 5)).pooled.qwk
    assert both_same.value is None and both_same.reason is not None


def test_scale_free_call_leaves_rating_agreement_undefined() -> None:
    pooled = calibrate([0.1, 0.5, 0.9], [1.0, 2.0, 3.0], resamples=50).pooled
    assert pooled.spearman.value == pytest.approx(1.0)
    for estimate in (pooled.qwk, pooled.exact, pooled.within_one):
        assert estimate.value is None and "scale" in (estimate.reason or "")


def test_unmeasured_pairs_are_left_out_and_counted() -> None:
    judge = [1.0, None, 3.0, 4.0, 2.0]
    human = [1.0, 5.0, None, 4.0, 3.0]
    result = calibrate(judge, human, documents=["d1", "d1", "d1", "d2", "d2"], resamples=50)
    assert (result.n_total, result.n_pairs) == (5, 3)
    assert result.pooled.pearson.value == pytest.approx(stats.pearsonr([1, 4, 2], [1, 4, 3]).statistic)
    assert result.per_document is not None
    assert (result.per_document.documents_used, result.per_document.documents_skipped) == (1, 1)
    assert result.to_dict()["per_document"]["spearman"]["value"] == pytest.approx(1.0)


def _summeval() -> list[dict[str, Any]]:
    if not SUMMEVAL.exists():
        pytest.skip(f"SummEval data not found at {SUMMEVAL} (shared test data is absent)")
    with SUMMEVAL.open() as f:
        return [json.loads(line) for line in f]


def _per_document(rows: list[dict[str, Any]], metric: str, dimension: str, corr: Any) -> tuple[list[float], int]:
    """G-Eval's summary-level correlations, computed independently: one per document with varying scores."""
    by_doc: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for row in rows:
        by_doc[row["doc_id"]][0].append(row[metric])
        by_doc[row["doc_id"]][1].append(row["human"][dimension])
    values = [corr(m, h).statistic for m, h in by_doc.values() if len(set(m)) > 1 and len(set(h)) > 1]
    return values, len(by_doc) - len(values)


@pytest.mark.parametrize("dimension", ["relevance", "consistency"])
def test_summeval_rouge_against_experts_pooled_and_per_document(dimension: str) -> None:
    rows = _summeval()
    metric = [r["rouge1"] for r in rows]
    human = [r["human"][dimension] for r in rows]
    result = calibrate(metric, human, documents=[r["doc_id"] for r in rows], resamples=200)
    pooled, per_doc = result.pooled, result.per_document
    assert per_doc is not None and result.n_pairs == 1600

    assert pooled.spearman.value == pytest.approx(stats.spearmanr(metric, human).statistic)
    assert pooled.kendall.value == pytest.approx(stats.kendalltau(metric, human).statistic)
    assert pooled.pearson.value == pytest.approx(stats.pearsonr(metric, human).statistic)
    assert pooled.mae.value == pytest.approx(np.mean(np.abs(np.subtract(metric, human))))

    spearman, skipped = _per_document(rows, "rouge1", dimension, stats.spearmanr)
    kendall, _ = _per_document(rows, "rouge1", dimension, stats.kendalltau)
    assert per_doc.spearman.value == pytest.approx(np.mean(spearman))
    assert per_doc.kendall.value == pytest.approx(np.mean(kendall))
    assert (per_doc.documents_used, per_doc.documents_skipped) == (100 - skipped, skipped)

    # Close to what G-Eval published (Liu et al. 2023, Table 1, ROUGE-1, summary level); their ROUGE
    # scores came from another implementation, so allow a few thousandths.
    published = {"relevance": (0.326, 0.252), "consistency": (0.160, 0.130)}[dimension]
    assert (per_doc.spearman.value, per_doc.kendall.value) == pytest.approx(published, abs=3e-3)

    # ROUGE tracks expert judgements weakly but clearly.
    for estimate in (pooled.spearman, pooled.kendall, per_doc.spearman, per_doc.kendall):
        assert estimate.value is not None and estimate.ci_low is not None and estimate.ci_high is not None
        assert 0 < estimate.ci_low < estimate.value < estimate.ci_high < 0.6


def test_summeval_per_document_ci_resamples_documents() -> None:
    rows = _summeval()
    metric = [r["rouge2"] for r in rows]
    human = [r["human"]["relevance"] for r in rows]
    docs = [r["doc_id"] for r in rows]
    per_doc = calibrate(metric, human, documents=docs, resamples=500).per_document
    assert per_doc is not None and per_doc.spearman.ci_low is not None and per_doc.spearman.ci_high is not None
    values, _ = _per_document(rows, "rouge2", "relevance", stats.spearmanr)
    # 100 documents: the CI of their mean correlation is about ±1.96 standard errors wide.
    half_width = 1.96 * np.std(values, ddof=1) / math.sqrt(len(values))
    assert per_doc.spearman.ci_high - per_doc.spearman.ci_low == pytest.approx(2 * half_width, rel=0.2)


@pytest.mark.parametrize(
    ("path", "dimension"),
    [("dialogue/topical_chat_result.json", "overall"), ("fact/qags_xsum_result.json", "consistency")],
)
def test_unieval_sample_level_correlation_equals_scipy(path: str, dimension: str) -> None:
    file = UNIEVAL / path
    if not file.exists():
        pytest.skip(f"UniEval data not found at {file} (shared test data is absent)")
    records = json.loads(file.read_text())
    predicted = [r["predict_scores"][dimension] for r in records]
    human = [r["scores"][dimension] for r in records]
    pooled = calibrate(predicted, human, resamples=200).pooled
    assert pooled.spearman.value == pytest.approx(stats.spearmanr(predicted, human).statistic)
    assert pooled.kendall.value == pytest.approx(stats.kendalltau(predicted, human).statistic)
    assert pooled.pearson.value == pytest.approx(stats.pearsonr(predicted, human).statistic)
    low, value, high = pooled.spearman.ci_low, pooled.spearman.value, pooled.spearman.ci_high
    assert low is not None and value is not None and high is not None
    assert 0.2 < low < value < high  # a released evaluator tracks its own benchmark's humans
