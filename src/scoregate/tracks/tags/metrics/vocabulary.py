"""The tags track's controlled vocabulary: topics, risk types with their severities, roles, and synonyms.

Model labels are normalised to this vocabulary before comparison (case, separators, listed synonyms, a
plural `s`); a label that still falls outside it is kept, marked, and counted as a false positive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOPIC_CATEGORIES: dict[str, tuple[str, ...]] = {
    "business": ("pricing", "billing", "contract", "features", "subscription", "renewal"),
    "support": ("technical_support", "account_access", "setup", "integration", "bug_report"),
    "relationship": ("complaint", "feedback", "satisfaction", "onboarding", "training"),
    "operations": ("scheduling", "delivery", "returns", "refund", "warranty"),
}
TOPICS: frozenset[str] = frozenset(t for group in TOPIC_CATEGORIES.values() for t in group)

SEVERITIES: tuple[str, ...] = ("low", "medium", "high", "critical")
SEVERITY_WEIGHTS: dict[str, float] = {"critical": 4.0, "high": 2.0, "medium": 1.0, "low": 0.5}
UNKNOWN_SEVERITY_WEIGHT = 1.0
"""Weight of a predicted risk whose severity is not one of SEVERITIES (it can never match a gold risk)."""

RISK_SEVERITIES: dict[str, tuple[str, ...]] = {
    "escalation": ("low", "medium", "high", "critical"),
    "churn_risk": ("low", "medium", "high", "critical"),
    "compliance": ("medium", "high", "critical"),
    "sentiment_negative": ("low", "medium", "high"),
    "pricing_objection": ("low", "medium", "high"),
    "competitor_mention": ("low", "medium"),
    "customer_frustration": ("low", "medium", "high"),
    "agent_error": ("low", "medium", "high"),
}
ASSIGNEE_ROLES: tuple[str, ...] = ("agent", "customer", "team", "unknown")

TOPIC_SYNONYMS: dict[str, str] = {
    "price": "pricing", "prices": "pricing", "cost": "pricing", "costs": "pricing", "quote": "pricing",
    "invoice": "billing", "invoices": "billing", "invoicing": "billing", "payment": "billing",
    "payments": "billing", "charge": "billing", "charges": "billing",
    "agreement": "contract", "contract_terms": "contract",
    "feature": "features", "feature_request": "features", "product_features": "features",
    "plan": "subscription", "plan_change": "subscription", "membership": "subscription",
    "renewals": "renewal", "contract_renewal": "renewal",
    "tech_support": "technical_support", "technical_issue": "technical_support",
    "troubleshooting": "technical_support", "support": "technical_support", "technical": "technical_support",
    "login": "account_access", "log_in": "account_access", "password": "account_access",
    "password_reset": "account_access", "account_lockout": "account_access", "access": "account_access",
    "set_up": "setup", "installation": "setup", "install": "setup", "configuration": "setup",
    "integrations": "integration", "api": "integration",
    "bug": "bug_report", "bugs": "bug_report", "defect": "bug_report", "software_bug": "bug_report",
    "complaints": "complaint",
    "customer_feedback": "feedback", "suggestion": "feedback",
    "customer_satisfaction": "satisfaction", "csat": "satisfaction",
    "onboard": "onboarding", "getting_started": "onboarding",
    "tutorial": "training", "education": "training",
    "schedule": "scheduling", "appointment": "scheduling", "booking": "scheduling",
    "shipping": "delivery", "shipment": "delivery",
    "return": "returns", "product_return": "returns",
    "refunds": "refund", "reimbursement": "refund",
    "guarantee": "warranty", "warranty_claim": "warranty",
}  # fmt: skip
"""Listed synonyms (keys in normalised form) → vocabulary topic."""

RISK_SYNONYMS: dict[str, str] = {
    "escalate": "escalation", "escalation_request": "escalation", "manager_request": "escalation",
    "churn": "churn_risk", "cancellation": "churn_risk", "cancellation_risk": "churn_risk",
    "legal": "compliance", "legal_threat": "compliance", "regulatory": "compliance", "privacy": "compliance",
    "negative_sentiment": "sentiment_negative", "anger": "sentiment_negative", "negative": "sentiment_negative",
    "price_objection": "pricing_objection", "budget_concern": "pricing_objection",
    "competitor": "competitor_mention", "competition": "competitor_mention",
    "frustration": "customer_frustration", "frustrated_customer": "customer_frustration",
    "agent_mistake": "agent_error", "mistake": "agent_error", "miscommunication": "agent_error",
}  # fmt: skip
"""Listed synonyms (keys in normalised form) → vocabulary risk type."""

SEVERITY_SYNONYMS: dict[str, str] = {
    "med": "medium", "moderate": "medium", "minor": "low", "severe": "high", "major": "high", "urgent": "critical",
}  # fmt: skip

_SEPARATORS = re.compile(r"[\s\-/.]+")
_STRIP = re.compile(r"[^a-z0-9_]")


@dataclass(frozen=True, slots=True)
class Normalised:
    """A label after normalisation: the vocabulary term (or the cleaned text) and whether it is in the vocabulary."""

    label: str
    known: bool
    original: str


def clean(text: str) -> str:
    """Lower-case, turn spaces, hyphens, slashes and dots into `_`, drop other punctuation."""
    return _STRIP.sub("", _SEPARATORS.sub("_", text.strip().lower())).strip("_")


def _normalise(
    text: str, vocabulary: frozenset[str] | dict[str, tuple[str, ...]], synonyms: dict[str, str]
) -> Normalised:
    cleaned = clean(text)
    if cleaned in vocabulary:
        return Normalised(cleaned, True, text)
    if cleaned in synonyms:
        return Normalised(synonyms[cleaned], True, text)
    singular = cleaned[:-1] if cleaned.endswith("s") else cleaned + "s"
    if singular in vocabulary:
        return Normalised(singular, True, text)
    return Normalised(cleaned or text.strip(), False, text)


def normalise_topic(text: str) -> Normalised:
    """Map a topic label to the vocabulary; `known` is False when it falls outside it."""
    return _normalise(text, TOPICS, TOPIC_SYNONYMS)


def normalise_risk_type(text: str) -> Normalised:
    """Map a risk type to the vocabulary; `known` is False when it falls outside it."""
    return _normalise(text, RISK_SEVERITIES, RISK_SYNONYMS)


def normalise_severity(text: str) -> Normalised:
    """Map a severity to low / medium / high / critical; `known` is False otherwise."""
    cleaned = clean(text)
    if cleaned in SEVERITY_WEIGHTS:
        return Normalised(cleaned, True, text)
    if cleaned in SEVERITY_SYNONYMS:
        return Normalised(SEVERITY_SYNONYMS[cleaned], True, text)
    return Normalised(cleaned or text.strip(), False, text)


def severity_weight(severity: str) -> float:
    """Return a severity's weight (critical 4, high 2, medium 1, low 0.5; unknown 1)."""
    return SEVERITY_WEIGHTS.get(severity, UNKNOWN_SEVERITY_WEIGHT)
