"""From an evaluator file's `kind:` to the code that scores with it.

Each factory imports its evaluator's module when first called, so a run loads only the kinds it uses
(the tags kind alone brings numpy; see tests/test_cli_startup.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scoregate.catalog.models import (
    CountersSpec,
    CustomSpec,
    EvaluatorSpec,
    ExtractionSpec,
    FactRecallSpec,
    LlmJudgeSpec,
    TagsSpec,
)
from scoregate.errors import ScoregateError
from scoregate.scoring.base import Evaluator

EvaluatorFactory = Callable[[Any, str | None], Evaluator]
"""factory(spec of its kind, default judge model) → evaluator."""


def _llm_judge(spec: LlmJudgeSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.scoring.judge import LlmJudge

    return LlmJudge(spec, default_judge_model)


def _counters(spec: CountersSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.scoring.counters import CountersEvaluator

    return CountersEvaluator(spec)


def _extraction(spec: ExtractionSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.tracks.extraction.kind import ExtractionEvaluator

    return ExtractionEvaluator(spec)


def _tags(spec: TagsSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.tracks.tags.kind import TagsEvaluator

    return TagsEvaluator(spec)


def _fact_recall(spec: FactRecallSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.scoring.facts import FactRecallEvaluator

    return FactRecallEvaluator(spec, default_judge_model)


def _custom(spec: CustomSpec, default_judge_model: str | None) -> Evaluator:
    from scoregate.scoring.custom import CustomEvaluator

    return CustomEvaluator(spec)


FACTORIES: dict[str, EvaluatorFactory] = {
    "llm_judge": _llm_judge,
    "counters": _counters,
    "extraction": _extraction,
    "tags": _tags,
    "fact_recall": _fact_recall,
    "custom": _custom,
}
"""Evaluator kind → factory; a new kind adds its spec to `EvaluatorSpec` and its factory here."""


def build_evaluator(spec: EvaluatorSpec, *, default_judge_model: str | None) -> Evaluator:
    """Return the evaluator for `spec`; raises ScoregateError for a kind with no code or a bad spec."""
    factory = FACTORIES.get(spec.kind)
    if factory is None:
        raise ScoregateError(
            f"evaluator kind {spec.kind!r} has no implementation",
            where=f"evaluator {spec.name}",
            hint=f"use one of: {', '.join(sorted(FACTORIES))}",
        )
    return factory(spec, default_judge_model)
