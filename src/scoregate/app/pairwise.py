"""The pairwise judge runner (`compare --judge`): both runs' shared items, judged by the project's pairwise judge."""

from __future__ import annotations

import asyncio

from scoregate.calls.cache import ResponseCache
from scoregate.calls.caller import ModelCaller
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.providers.base import ProviderContext
from scoregate.scoring.judge import LlmJudge
from scoregate.scoring.kinds.llm_judge import as_llm_judge
from scoregate.scoring.preference import (
    DEFAULT_EVALUATOR,
    FIRST_VARIABLE,
    SECOND_VARIABLE,
    PreferenceResult,
    check_preference_spec,
    judge_pairs,
)
from scoregate.store.records import ItemResult
from scoregate.store.run_store import RunStore


def shared_pairs(store_a: RunStore, store_b: RunStore) -> list[tuple[ItemResult, ItemResult]]:
    """Return (A result, B result) for every item id in both runs, in run A's item order."""
    by_id = {r.item_id: r for r in store_a.iter_results()}
    pairs = [(by_id[b.item_id], b) for b in store_b.iter_results() if b.item_id in by_id]
    return sorted(pairs, key=lambda pair: pair[0].index)


def judge_runs(
    project: Project,
    store_a: RunStore,
    store_b: RunStore,
    *,
    evaluator: str = DEFAULT_EVALUATOR,
    model: str | None = None,
    use_cache: bool = True,
    concurrency: int | None = None,
    confidence: float = 0.95,
) -> PreferenceResult:
    """Judge run B's outputs against run A's with the project's pairwise judge; return B's win rate."""
    found = project.evaluators.get(evaluator)
    spec = as_llm_judge(found)
    if spec is None:
        what = "is not an llm_judge" if found is not None else "does not exist"
        raise ScoregateError(
            f"the pairwise judge {evaluator!r} {what}",
            where=str(project.root / "evaluators"),
            hint=f"add evaluators/{evaluator}.yaml (kind: llm_judge, variables {FIRST_VARIABLE} and {SECOND_VARIABLE})",
        )
    settings = project.config.settings
    if model is not None:
        spec = spec.model_copy(update={"model": model})
    judge = LlmJudge(spec, default_model=settings.judge_model or settings.model)
    check_preference_spec(spec)
    if judge.model not in project.config.models:
        from scoregate.support.suggest import unknown_name

        raise ScoregateError(
            f"judge model {judge.model!r} is not under `models:` in scoregate.yaml"
            + unknown_name(str(judge.model), project.config.models),
            where=str(project.config_path),
        )
    cache = ResponseCache(project.root / ".scoregate" / "cache.sqlite") if use_cache else None
    context = ProviderContext(project.root, settings)
    caller = ModelCaller(project.config.models, default_judge=str(judge.model), cache=cache, context=context)

    async def go() -> PreferenceResult:
        try:
            await caller.preflight([str(judge.model)])
            return await judge_pairs(
                judge, shared_pairs(store_a, store_b), caller,
                concurrency=concurrency or settings.concurrency, confidence=confidence,
            )  # fmt: skip
        finally:
            await caller.aclose()

    try:
        return asyncio.run(go())
    finally:
        if cache is not None:
            cache.close()
