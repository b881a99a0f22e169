"""Names an experiment refers to that do not exist, each with the closest defined names."""

from __future__ import annotations

from scoregate.catalog.config_models import CompositeSpec, ExperimentSpec, GateSpec
from scoregate.catalog.project import Project
from scoregate.catalog.routing import route_prompts
from scoregate.catalog.stages import stage_metric_names
from scoregate.store.vocabulary import GATE_RUN_METRICS
from scoregate.support.suggest import did_you_mean, unknown_name


def unknown_option_model(option: str, value: str, project: Project) -> str:
    """Return "OPTION VALUE: no such model under `models:`; did you mean …? (defined: …)"."""
    named = f"{option}={value} (passed as --model)" if option.isupper() else f"{option} {value}"
    return f"{named}: no such model under `models:` in scoregate.yaml" + unknown_name(value, project.config.models)


def known_metrics(project: Project, evaluators: list[str], composites: list[str]) -> set[str]:
    """Return every metric name a gate of this experiment may name."""
    names = set(GATE_RUN_METRICS) | set(composites)
    for name in evaluators:
        if name in project.evaluators:
            names.update(project.evaluators[name].score_keys())
    return names


def reference_problems(project: Project, name: str, spec: ExperimentSpec, model_name: str) -> list[str]:
    """Return what experiment `name` names that does not exist (dataset, prompts, models, evaluators, gates)."""
    where = f"{project.config_path}: experiments.{name}"
    problems = []
    models = project.config.models
    if spec.dataset not in project.datasets:
        problems.append(
            f"{where}.dataset: no dataset {spec.dataset!r} (datasets/{spec.dataset}.jsonl)"
            + unknown_name(spec.dataset, project.datasets)
        )
    problems += [
        f"{where}.prompt: no prompt {p!r} (prompts/{p}.yaml)" + unknown_name(p, project.prompts)
        for p in route_prompts(spec.prompt)
        if p not in project.prompts
    ]
    if model_name not in project.config.models:
        field = f"{where}.model" if spec.model else f"{project.config_path}: settings.model"
        problems.append(f"{field}: no model {model_name!r} under `models:`" + unknown_name(model_name, models))
    judge = spec.judge_model or project.config.settings.judge_model or model_name
    if judge not in project.config.models:
        field = f"{where}.judge_model" if spec.judge_model else f"{project.config_path}: settings.judge_model"
        problems.append(f"{field}: no model {judge!r} under `models:`" + unknown_name(judge, models))
    problems += [
        f"{where}.evaluators: {e!r} is listed more than once; list each evaluator once"
        for e in dict.fromkeys(spec.evaluators)
        if spec.evaluators.count(e) > 1
    ]
    for e in spec.evaluators:
        evaluator = project.evaluators.get(e)
        if evaluator is None:
            problems.append(
                f"{where}.evaluators: no evaluator {e!r} (evaluators/{e}.yaml)" + unknown_name(e, project.evaluators)
            )
        else:
            problems += [
                f"{project.source('evaluator', e)}: model: no model {model!r} in scoregate.yaml"
                + unknown_name(model, models)
                for model in evaluator.named_models()
                if model not in project.config.models
            ]
            problems += evaluator.problems(project.source("evaluator", e))
    problems += [
        f"{where}.composites: no composite {c!r} under `composites:`" + unknown_name(c, project.config.composites)
        for c in spec.composites
        if c not in project.config.composites
    ]
    gates_by_name = {g.name: g for g in project.config.gates}
    known = known_metrics(project, spec.evaluators, spec.composites) | stage_metric_names(project, spec)
    for gate_name in spec.gates:
        gate = gates_by_name.get(gate_name)
        if gate is None:
            problems.append(
                f"{where}.gates: no gate {gate_name!r} under `gates:`" + unknown_name(gate_name, gates_by_name)
            )
        else:
            problems += gate_problems(project, gate, known, experiment=name)
    for comp in spec.composites:
        for part in project.config.composites.get(comp, CompositeSpec(weights={"_": 1})).weights:
            if comp in project.config.composites and part not in known:
                problems.append(
                    f"{project.config_path}: composites.{comp}: experiment {name!r} does not measure score {part!r}"
                    + (f"; {suggestion}" if (suggestion := did_you_mean(part, known)) else "")
                )
    return problems


def gate_problems(project: Project, gate: GateSpec, known: set[str], *, experiment: str) -> list[str]:
    """A gate's metric must be measured, and the evaluator whose calibration it requires must exist."""
    where = f"{project.config_path}: gates.{gate.name}"
    problems = []
    if gate.metric not in known:
        suggestion = did_you_mean(gate.metric, known)
        problems.append(
            f"{where}.metric: unknown metric {gate.metric!r} in experiment {experiment!r} (its `gates:` lists "
            f"{gate.name}){'; ' + suggestion if suggestion else ''}; add the evaluator that writes it to "
            f"experiments.{experiment}.evaluators or take the gate off that list; {experiment!r} measures: "
            f"{', '.join(sorted(known))}"
        )
    calibration = gate.requires_calibration
    if calibration is not None and calibration.evaluator not in project.evaluators:
        problems.append(
            f"{where}.requires_calibration.evaluator: no evaluator {calibration.evaluator!r} "
            f"(evaluators/{calibration.evaluator}.yaml)" + unknown_name(calibration.evaluator, project.evaluators)
        )
    return problems
