"""Multi-stage pipelines in a plan: the stages' names, prompts, models and evaluators, checked before any call."""

from __future__ import annotations

from scoregate.catalog.config_models import ExperimentSpec
from scoregate.catalog.project import Project
from scoregate.support.suggest import unknown_name


def stage_prompts(spec: ExperimentSpec) -> list[str]:
    """The prompts of every stage but the last (the last is the experiment's `prompt`)."""
    return [stage.prompt for stage in spec.stages[:-1]]


def live_variables(spec: ExperimentSpec) -> set[str]:
    """Variables a pipeline fills from earlier stages' outputs (live mode); fixture mode reads them from items."""
    return {stage.name for stage in spec.stages[:-1]} if spec.stage_inputs == "live" else set()


def stage_problems(project: Project, name: str, spec: ExperimentSpec) -> list[str]:
    """Return what is wrong with an experiment's stages (unknown prompt, model or evaluator)."""
    where = f"{project.config_path}: experiments.{name}.stages"
    problems = []
    models = project.config.models
    for i, stage in enumerate(spec.stages[:-1]):
        at = f"{where}[{i}] ({stage.name})"
        if stage.prompt not in project.prompts:
            problems.append(
                f"{at}.prompt: no prompt {stage.prompt!r} (prompts/{stage.prompt}.yaml)"
                + unknown_name(stage.prompt, project.prompts)
            )
        if stage.model is not None and stage.model not in project.config.models:
            problems.append(f"{at}.model: no model {stage.model!r} under `models:`" + unknown_name(stage.model, models))
        for e in stage.evaluators:
            evaluator = project.evaluators.get(e)
            if evaluator is None:
                problems.append(
                    f"{at}.evaluators: no evaluator {e!r} (evaluators/{e}.yaml)" + unknown_name(e, project.evaluators)
                )
            else:
                problems += [
                    f"{project.source('evaluator', e)}: model: no model {model!r}"
                    for model in evaluator.named_models()
                    if model not in project.config.models
                ]
    return problems


def stage_models(spec: ExperimentSpec, model_name: str) -> list[str]:
    """The model of each stage but the last, in order."""
    return [stage.model or model_name for stage in spec.stages[:-1]]


def stage_metric_names(project: Project, spec: ExperimentSpec) -> set[str]:
    """The `<stage>.<key>` scores the stages' evaluators write, which gates and composites may name."""
    return {
        f"{stage.name}.{key}"
        for stage in spec.stages[:-1]
        for name in stage.evaluators
        if name in project.evaluators
        for key in project.evaluators[name].score_keys()
    }
