"""Multi-stage pipelines: each stage a prompt on a model; the last stage's output is the item's output.

`live`: a stage's template reads earlier stages' outputs as `{{<stage name>}}` (chained, realistic, less stable).
`fixture`: every stage reads the item's own input, where the dataset holds a fixed value for each earlier
stage (stable and comparable: a change to one stage moves only that stage's scores).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoregate.calls.errors import ModelCallFailed
from scoregate.catalog.config_models import StageSpec
from scoregate.catalog.models import DatasetItem
from scoregate.catalog.plan import ExperimentPlan
from scoregate.engine.item import ItemPipeline, _parse_output, compose
from scoregate.scoring.base import EvalContext, Evaluator
from scoregate.store.records import CallRecord, ItemResult, Score
from scoregate.tracks.registry import build_evaluator


def stage_key(stage: str, key: str) -> str:
    """The score key of an evaluator that scores a stage: `<stage>.<key>`."""
    return f"{stage}.{key}"


@dataclass(frozen=True)
class StagedPipeline(ItemPipeline):
    """An ItemPipeline whose model output comes after earlier stages; each stage is called and scored."""

    stages: tuple[StageSpec, ...] = ()
    stage_inputs: str = "live"
    stage_evaluators: dict[str, list[Evaluator]] = field(default_factory=dict)

    async def run(self, index: int, item: DatasetItem) -> ItemResult:
        """Run every stage in order, then the last one (the task) and its evaluators; failures are data."""
        assert item.id is not None
        live = self.stage_inputs == "live"
        calls: list[CallRecord] = []
        outputs: dict[str, dict[str, Any]] = {}
        available = dict(item.input)
        failure: str | None = None
        stage_scores: list[Score] = []
        for stage in self.stages[:-1]:
            if failure is not None:
                outputs[stage.name] = {"output": None, "error": f"not run: {failure}"}
                stage_scores += self._missing(stage.name, f"not run: {failure}")
                continue
            variables = available if live else dict(item.input)
            output, error = await self._call_stage(stage, item.model_copy(update={"input": variables}), calls)
            prompt = f"{stage.prompt}@{self.prompt_versions[stage.prompt]}"
            outputs[stage.name] = {"prompt": prompt, "output": output, "error": error}
            if error is not None:
                stage_scores += self._missing(stage.name, f"stage {stage.name}: {error}")
                failure = f"stage {stage.name} failed: {error}" if live else None
                continue
            stage_scores += await self._score_stage(stage.name, item, variables, output, calls)
            if live:
                available[stage.name] = output
        if failure is not None:
            result = await self._failed(index, item, failure, calls)
        else:
            result = await super().run(index, item.model_copy(update={"input": available}) if live else item)
            result.input = item.input
            result.calls[:0] = calls
        result.stages = outputs
        result.scores[:0] = stage_scores
        return result

    async def _call_stage(self, stage: StageSpec, item: DatasetItem, calls: list[CallRecord]) -> tuple[Any, str | None]:
        prompt = self.prompts[stage.prompt]
        try:
            completion = await self.caller.call(
                stage.model or self.model_name, self.request_for(prompt, item), f"stage:{stage.name}", calls
            )
        except ModelCallFailed as exc:
            return None, f"model call failed: {exc}"
        return _parse_output(completion.text, prompt)

    async def _score_stage(
        self, stage: str, item: DatasetItem, variables: dict[str, Any], output: Any, calls: list[CallRecord]
    ) -> list[Score]:
        async def call_model(name: str | None, request: Any, purpose: str) -> Any:
            return await self.caller.call(name, request, purpose, calls)

        scores: list[Score] = []
        for evaluator in self.stage_evaluators.get(stage, []):
            context = EvalContext(
                item_id=str(item.id), input=variables, output=output, expected_output=item.expected_output,
                metadata=item.metadata, call_model=call_model,
            )  # fmt: skip
            try:
                found = await evaluator.evaluate(context)
            except Exception as exc:  # an evaluator bug must not lose the item
                reason = f"evaluator {evaluator.name} failed: {type(exc).__name__}: {exc}"
                found = [Score.missing(k, t, evaluator.name, reason) for k, t in evaluator.score_keys()]
            for score in found:
                score.name = stage_key(stage, score.name)
                score.evaluator = f"{score.evaluator}@{stage}"
            scores += found
        return scores

    def _missing(self, stage: str, reason: str) -> list[Score]:
        return [
            Score.missing(stage_key(stage, key), data_type, f"{evaluator.name}@{stage}", reason)
            for evaluator in self.stage_evaluators.get(stage, [])
            for key, data_type in evaluator.score_keys()
        ]

    async def _failed(self, index: int, item: DatasetItem, failure: str, calls: list[CallRecord]) -> ItemResult:
        """The result of an item whose chain broke before its last stage: every later score null with the reason."""
        last = self.stages[-1].prompt
        result = ItemResult(
            index=index, item_id=str(item.id), prompt=f"{last}@{self.prompt_versions[last]}", input=item.input,
            output=None, expected_output=item.expected_output, metadata=item.metadata, error=failure, calls=calls,
        )  # fmt: skip
        result.scores = [
            Score.missing(key, data_type, evaluator.name, f"no output to score: {failure}")
            for evaluator in self.evaluators
            for key, data_type in evaluator.score_keys()
        ]
        result.scores += compose(result.scores, self.composites)
        return result


def stage_score_columns(pipeline_evaluators: dict[str, list[Evaluator]]) -> list[tuple[str, Any]]:
    """Every `<stage>.<key>` score column the stages' evaluators write."""
    return [
        (stage_key(stage, key), data_type)
        for stage, evaluators in pipeline_evaluators.items()
        for evaluator in evaluators
        for key, data_type in evaluator.score_keys()
    ]


def stage_evaluators(plan: ExperimentPlan) -> dict[str, list[Evaluator]]:
    """Stage name → the evaluators of its output (every stage but the last, which the experiment's score)."""
    return {
        stage: [build_evaluator(spec, default_judge_model=plan.judge_model_name) for spec in specs.values()]
        for stage, specs in plan.stage_evaluators.items()
    }


def staged_pipeline(base: ItemPipeline, plan: ExperimentPlan) -> StagedPipeline:
    """Return `base` extended with the plan's stages (it runs the last one)."""
    fields = {name: getattr(base, name) for name in ItemPipeline.__dataclass_fields__}
    return StagedPipeline(
        **fields,
        stages=tuple(plan.spec.stages),
        stage_inputs=plan.spec.stage_inputs,
        stage_evaluators=stage_evaluators(plan),
    )


def stages_receipt(plan: ExperimentPlan, prompt_versions: dict[str, str]) -> dict[str, Any]:
    """The receipt of a pipeline: its mode, and each stage's prompt@version, model and evaluators (empty if none)."""
    if not plan.spec.stages:
        return {}
    stages = {}
    for stage in plan.spec.stages:
        specs = plan.stage_evaluators.get(stage.name, {})
        stages[stage.name] = {
            "prompt": f"{stage.prompt}@{prompt_versions[stage.prompt]}",
            "model": stage.model or plan.model_name,
            "evaluators": {name: {"kind": spec.kind, "version": spec.version} for name, spec in specs.items()},
        }
    return {"pipeline_mode": plan.spec.stage_inputs, "stages": stages}
