"""Semantic tags scoring (topics, risks, actions against gold labels): pure functions, no I/O.

Normalise labels with `read_labels`, score one sample with `score_sample`, aggregate with `micro_metrics`.
"""

from scoregate.tracks.tags.metrics.labels import Action, Risk, TagLabels, read_labels
from scoregate.tracks.tags.metrics.matching import (
    ACTION_THRESHOLD,
    ActionMatch,
    Counts,
    RiskMatch,
    action_similarity,
    match_actions,
    match_risks,
    normalize_text,
    risk_counts,
    topic_counts,
)
from scoregate.tracks.tags.metrics.scores import (
    FAMILIES,
    METRIC_KEYS,
    MicroMetric,
    SampleTags,
    micro_metrics,
    prf,
    score_sample,
)
from scoregate.tracks.tags.metrics.vocabulary import (
    ASSIGNEE_ROLES,
    RISK_SEVERITIES,
    SEVERITY_WEIGHTS,
    TOPIC_CATEGORIES,
    TOPICS,
    normalise_risk_type,
    normalise_severity,
    normalise_topic,
)

__all__ = [
    "ACTION_THRESHOLD",
    "ASSIGNEE_ROLES",
    "FAMILIES",
    "METRIC_KEYS",
    "RISK_SEVERITIES",
    "SEVERITY_WEIGHTS",
    "TOPICS",
    "TOPIC_CATEGORIES",
    "Action",
    "ActionMatch",
    "Counts",
    "MicroMetric",
    "Risk",
    "RiskMatch",
    "SampleTags",
    "TagLabels",
    "action_similarity",
    "match_actions",
    "match_risks",
    "micro_metrics",
    "normalise_risk_type",
    "normalise_severity",
    "normalise_topic",
    "normalize_text",
    "prf",
    "read_labels",
    "risk_counts",
    "score_sample",
    "topic_counts",
]
