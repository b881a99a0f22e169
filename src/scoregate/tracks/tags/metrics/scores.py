"""Tags metrics: per-sample P/R/F1 with detail, and micro values over a dataset with CIs by resampling samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from scoregate.tracks.tags.metrics.labels import TagLabels
from scoregate.tracks.tags.metrics.matching import (
    ACTION_THRESHOLD,
    ActionMatch,
    Counts,
    RiskMatch,
    action_counts,
    match_actions,
    match_risks,
    risk_counts,
    topic_counts,
)

FAMILIES: tuple[str, ...] = ("topic", "risk", "risk_severity", "risk_weighted", "action")
"""Count families; each gives precision, recall and F1 (action recall is called accuracy)."""

METRIC_KEYS: tuple[str, ...] = (
    "topic_precision", "topic_recall", "topic_f1",
    "risk_precision", "risk_recall", "risk_f1",
    "risk_severity_precision", "risk_severity_recall", "risk_severity_f1",
    "risk_weighted_precision", "risk_weighted_recall", "risk_weighted_f1",
    "action_precision", "action_accuracy", "action_f1",
)  # fmt: skip
"""Per-sample and micro metric names, in order."""

_NOUN = {"topic": "topics", "risk": "risks", "risk_severity": "risks", "risk_weighted": "risks", "action": "actions"}


def _recall_name(family: str) -> str:
    return "action_accuracy" if family == "action" else f"{family}_recall"


def prf(c: Counts, family: str) -> dict[str, tuple[float | None, str | None]]:
    """Precision, recall and F1 of one family's counts: key → (value, reason when null).

    F1 = 2TP / (2TP + FP + FN): it is 0 when only one side has labels, null only when neither has any.
    """
    noun = _NOUN[family]
    out: dict[str, tuple[float | None, str | None]] = {}
    predicted, gold = c.tp + c.fp, c.tp + c.fn
    out[f"{family}_precision"] = (c.tp / predicted, None) if predicted else (None, f"no predicted {noun}")
    out[_recall_name(family)] = (c.tp / gold, None) if gold else (None, f"no gold {noun}")
    denominator = 2 * c.tp + c.fp + c.fn
    out[f"{family}_f1"] = (
        (2 * c.tp / denominator, None) if denominator else (None, f"neither gold nor prediction has {noun}")
    )
    return out


@dataclass(frozen=True, slots=True)
class SampleTags:
    """One sample scored: counts per family, metric values with null reasons, and the detail."""

    counts: dict[str, Counts]
    values: dict[str, float | None]
    reasons: dict[str, str]
    predicted_topics: list[str]
    gold_topics: list[str]
    risk_matches: list[RiskMatch]
    action_matches: list[ActionMatch]
    outside_vocabulary: list[str]
    problem: str | None

    def detail(self) -> dict[str, Any]:
        """The per-sample detail (JSON-ready): topics predicted vs gold, risk and action matches."""
        return {
            "predicted_topics": self.predicted_topics,
            "gold_topics": self.gold_topics,
            "risk_matches": [asdict(m) for m in self.risk_matches],
            "action_matches": [asdict(m) for m in self.action_matches],
            "outside_vocabulary": self.outside_vocabulary,
            "reply_problem": self.problem,
        }


def score_sample(predicted: TagLabels, gold: TagLabels, *, threshold: float = ACTION_THRESHOLD) -> SampleTags:
    """Score one sample's predicted labels against its gold labels."""
    risk_type, risk_severity, risk_weighted = risk_counts(predicted.risks, gold.risks)
    actions = match_actions(predicted.actions, gold.actions, threshold=threshold)
    counts = {
        "topic": topic_counts(predicted.topics, gold.topics),
        "risk": risk_type,
        "risk_severity": risk_severity,
        "risk_weighted": risk_weighted,
        "action": action_counts(actions),
    }
    values: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    for family, c in counts.items():
        for key, (value, reason) in prf(c, family).items():
            values[key] = value
            if reason is not None:
                reasons[key] = reason
    return SampleTags(
        counts=counts,
        values=values,
        reasons=reasons,
        predicted_topics=list(predicted.topics),
        gold_topics=list(gold.topics),
        risk_matches=match_risks(predicted.risks, gold.risks),
        action_matches=actions,
        outside_vocabulary=list(predicted.outside_vocabulary),
        problem=predicted.problem,
    )


@dataclass(frozen=True, slots=True)
class MicroMetric:
    """A micro-averaged metric over samples with its bootstrap CI (resampling samples)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None
    samples_measured: int
    """Samples scored (each counts, a true negative included: a sample with no gold and no predicted risks)."""


def _micro_from_sums(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, kind: str) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "precision":
            return np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        if kind == "recall":
            return np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        denominator = 2 * tp + fp + fn
        return np.where(denominator > 0, 2 * tp / denominator, np.nan)


def micro_metrics(
    samples: Sequence[dict[str, Counts]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, MicroMetric]:
    """Micro P/R/F1 of every family summed over samples; CIs by resampling samples and recomputing the micro value.

    The CI is the percentile interval of the micro value over `resamples` bootstrap sets of samples (a set in
    which the metric is undefined is left out); it is not built by averaging per-sample F1.
    """
    n = len(samples)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n)) if n else np.zeros((0, 0), dtype=int)
    alpha = (1 - confidence) / 2
    out: dict[str, MicroMetric] = {}
    for family in FAMILIES:
        arr = np.array([[s[family].tp, s[family].fp, s[family].fn] for s in samples], dtype=float).reshape(n, 3)
        total = Counts(*arr.sum(axis=0)) if n else Counts()
        point = prf(total, family)
        boot = arr[draws].sum(axis=1) if n else np.zeros((0, 3))
        for kind, key in (
            ("precision", f"{family}_precision"),
            ("recall", _recall_name(family)),
            ("f1", f"{family}_f1"),
        ):
            value, reason = point[key]
            if not n:
                out[key] = MicroMetric(None, None, None, "no scored samples", 0)
                continue
            low = high = None
            if value is not None:
                dist = _micro_from_sums(boot[:, 0], boot[:, 1], boot[:, 2], kind)
                dist = dist[~np.isnan(dist)]
                if dist.size:
                    low, high = float(np.quantile(dist, alpha)), float(np.quantile(dist, 1 - alpha))
            out[key] = MicroMetric(value, low, high, reason, n)
    return out
