"""Production levels (minimum / target / excellence) as gates, and the deployment recommendation rule.

The levels are the benchmark specification's thresholds. They are judged with the same gate logic as
`scoregate.yaml` (per-item means of the extraction scores, run metrics for latency and success), so a level
and the gates of the same name in scoregate.yaml can never disagree; a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from scoregate.analysis.gates import evaluate_gate, overall_verdict
from scoregate.catalog.config_models import GateOp, GateSpec

Level = Literal["minimum", "target", "excellence"]
LEVEL_ORDER: tuple[Level, ...] = ("minimum", "target", "excellence")

# check name → (metric in the run summary, operator)
CHECKS: dict[str, tuple[str, GateOp]] = {
    "eqs": ("eqs", ">="),
    "schema_validity": ("schema_valid", ">="),
    "field_f1_partial": ("field_f1_partial", ">="),
    "hallucination_rate": ("hallucination_rate", "<="),
    "latency_p95": ("latency_p95_ms", "<="),
    "success_rate": ("success_rate", ">="),
}

LEVEL_THRESHOLDS: dict[Level, dict[str, float]] = {
    "minimum": {
        "eqs": 0.75,
        "schema_validity": 0.95,
        "field_f1_partial": 0.70,
        "hallucination_rate": 0.10,
        "latency_p95": 5000,
        "success_rate": 0.99,
    },
    "target": {
        "eqs": 0.85,
        "schema_validity": 0.98,
        "field_f1_partial": 0.80,
        "hallucination_rate": 0.05,
        "latency_p95": 2000,
        "success_rate": 0.995,
    },
    "excellence": {
        "eqs": 0.90,
        "schema_validity": 0.99,
        "field_f1_partial": 0.90,
        "hallucination_rate": 0.02,
        "latency_p95": 1000,
        "success_rate": 0.999,
    },
}
"""The specification's production requirements (latency in milliseconds)."""


def level_gates(level: Level) -> list[GateSpec]:
    """Return the gates of one production level, named `extraction_<level>_<check>` as in scoregate.yaml."""
    return [
        GateSpec(name=f"extraction_{level}_{check}", metric=metric, op=op, threshold=LEVEL_THRESHOLDS[level][check])
        for check, (metric, op) in CHECKS.items()
    ]


def production_levels(summary: Mapping[str, Any], *, min_coverage: float = 0.8) -> dict[str, Any]:
    """Judge every level's gates on a run summary; return each level's verdict and the highest level passed."""
    levels: dict[str, Any] = {}
    reached: Level | None = None
    climbing = True  # a level counts as reached only when every level below it passed too
    for level in LEVEL_ORDER:
        results = [evaluate_gate(g, dict(summary), column=None, min_coverage=min_coverage) for g in level_gates(level)]
        verdict = overall_verdict(results)
        levels[level] = {"verdict": verdict, "gates": [r.to_dict() for r in results]}
        climbing = climbing and verdict == "pass"
        if climbing:
            reached = level
    return {"levels": levels, "level_reached": reached}


RecommendationCode = Literal[
    "deploy_without_review",
    "deploy_with_spot_checks",
    "deploy_with_mandatory_review",
    "not_recommended",
    "not_measured",
]

_RULES: tuple[tuple[float, float, RecommendationCode, str], ...] = (
    (0.90, 0.02, "deploy_without_review", "Deploy without human review"),
    (0.80, 0.05, "deploy_with_spot_checks", "Deploy with spot-check human review"),
    (0.70, 0.10, "deploy_with_mandatory_review", "Deploy with mandatory human review"),
)


@dataclass(frozen=True)
class Recommendation:
    """The deployment advice for one run, with the values it was decided on."""

    code: RecommendationCode
    text: str
    eqs: float | None
    hallucination_rate: float | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form."""
        return asdict(self)


def recommend(eqs: float | None, hallucination_rate: float | None) -> Recommendation:
    """Apply the rule: EQS ≥ 0.90 and hallucination < 2% → no review; ≥ 0.80, < 5% → spot checks;
    ≥ 0.70, < 10% → mandatory review; else not recommended. Unmeasured inputs give `not_measured`."""
    missing = [name for name, v in (("EQS", eqs), ("hallucination rate", hallucination_rate)) if v is None]
    if eqs is None or hallucination_rate is None:
        return Recommendation(
            "not_measured", "No recommendation", eqs, hallucination_rate, reason=f"{' and '.join(missing)} not measured"
        )
    for min_eqs, max_hallucination, code, text in _RULES:
        if eqs >= min_eqs and hallucination_rate < max_hallucination:
            return Recommendation(code, text, eqs, hallucination_rate)
    return Recommendation(
        "not_recommended", "Not recommended for production - needs improvement", eqs, hallucination_rate
    )


def summary_recommendation(summary: Mapping[str, Any]) -> Recommendation:
    """Return the recommendation from a run summary's mean EQS and mean hallucination rate (per item)."""
    scores = summary.get("scores", {})
    return recommend(scores.get("eqs", {}).get("mean"), scores.get("hallucination_rate", {}).get("mean"))
