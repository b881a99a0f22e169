"""Resolve an experiment into a plan and check it against its dataset before any model call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoregate.catalog.config_models import CompositeSpec, ExperimentSpec, GateSpec
from scoregate.catalog.datasets import DatasetRef, DatasetScan, scan
from scoregate.catalog.evaluators import EvaluatorSpec
from scoregate.catalog.missing_variables import MissingVariables
from scoregate.catalog.models import DatasetItem, ModelSpec, PromptRoute, PromptSpec
from scoregate.catalog.production_checks import production_checks
from scoregate.catalog.project import Project
from scoregate.catalog.references import reference_problems, unknown_option_model
from scoregate.catalog.routing import RouteError, choose_prompt, route_prompts
from scoregate.catalog.slice_fields import SliceFieldsSeen
from scoregate.catalog.stages import live_variables, stage_models, stage_problems, stage_prompts
from scoregate.catalog.templates import malformed_placeholders, prompt_texts, prompt_variables
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.support.suggest import unknown_name


@dataclass(frozen=True)
class ExperimentPlan:
    """An experiment with every name resolved and its dataset checked."""

    name: str
    spec: ExperimentSpec
    dataset: DatasetRef
    dataset_scan: DatasetScan
    prompts: dict[str, PromptSpec]
    model_name: str
    model: ModelSpec
    judge_model_name: str
    evaluators: dict[str, EvaluatorSpec]
    composites: dict[str, CompositeSpec]
    gates: list[GateSpec]
    stage_evaluators: dict[str, dict[str, EvaluatorSpec]] = field(default_factory=dict)
    """Pipeline stage (all but the last) → the evaluators of its output."""

    @property
    def route(self) -> str | PromptRoute:
        """The experiment's prompt or prompt route."""
        return self.spec.prompt


def _evaluator_problems(project: Project, name: str, spec: ExperimentSpec, judge: str) -> list[str]:
    """Build every evaluator once (the checks a run would hit later) and reject a score key written twice."""
    problems = []
    writers: dict[str, str] = {}
    for e in spec.evaluators:
        evaluator = project.evaluators[e]
        source = project.source("evaluator", e)
        try:
            project.kinds.build(evaluator, default_judge_model=judge)
        except ScoregateError as exc:
            problems.append(f"{source}: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            continue
        for key in evaluator.score_keys():
            if key in writers and writers[key] != e:
                problems.append(
                    f"{project.config_path}: experiments.{name}.evaluators: score key {key!r} is written by both "
                    f"{writers[key]} ({project.source('evaluator', writers[key])}) and {e} ({source}); one value "
                    "would silently replace the other: rename the key in one of them"
                )
            writers.setdefault(key, e)
    for composite in spec.composites:
        if composite in writers:
            problems.append(
                f"{project.config_path}: composites.{composite}: has the name of a score of evaluator "
                f"{writers[composite]}; rename the composite"
            )
    return problems


def _placeholder_problems(project: Project, spec: ExperimentSpec) -> list[str]:
    """Flag `{{title}` and other broken placeholders, which would be sent to the model literally."""
    return [
        f"{project.source('prompt', p)}: malformed placeholder near {snippet!r}; write it as {{{{name}}}}"
        for p in route_prompts(spec.prompt)
        for text in prompt_texts(project.prompts[p])
        for snippet in malformed_placeholders(text)
    ]


def _input_validator(ref: DatasetRef) -> Any:
    """A JSON Schema validator of the dataset's `input_schema`, or None; jsonschema is imported only then."""
    if not ref.meta.input_schema:
        return None
    import jsonschema

    return jsonschema.Draft202012Validator(ref.meta.input_schema)


def _item_checker(project: Project, spec: ExperimentSpec, ref: DatasetRef, missing: MissingVariables) -> Any:
    input_validator = _input_validator(ref)
    variables = {name: set(prompt_variables(p)) for name, p in project.prompts.items()}
    from_stages = live_variables(spec)

    def check(line: int, item: DatasetItem) -> list[str]:
        found = input_schema_problems(ref, input_validator, item)
        try:
            prompt_name = choose_prompt(spec.prompt, item.input)
        except RouteError as exc:
            return [*found, f"item {item.id!r}: cannot choose a prompt: {exc}"]
        for name in dict.fromkeys([*stage_prompts(spec), prompt_name]):
            prompt = project.prompts.get(name)
            if prompt is None:
                continue
            for v in sorted(variables[name] - item.input.keys() - prompt.variables.keys() - from_stages):
                at = (ref.path, line, str(item.id))
                missing.add(name, v, at, set(item.input), pipeline=bool(spec.stages))
            found += _reply_schema_problems(name, prompt, item)
        return found

    return check


def input_schema_problems(ref: DatasetRef, validator: Any, item: DatasetItem) -> list[str]:
    """Return `input.<path>: message (schema in FILE)` for each way the item's input breaks the dataset's schema."""
    found = []
    for err in validator.iter_errors(item.input) if validator is not None else []:
        path = ".".join(str(p) for p in err.absolute_path)
        found.append(f"input{'.' + path if path else ''}: {err.message} (schema in {ref.meta_path})")
    return found


def _reply_schema_problems(name: str, prompt: PromptSpec, item: DatasetItem) -> list[str]:
    """A prompt whose reply schema comes from the item (`schema_from: input.<f>`) needs that field as an object."""
    response_format = prompt.config.response_format
    if response_format is None or response_format.schema_from is None:
        return []
    field_name = response_format.schema_from.removeprefix("input.")
    if isinstance(item.input.get(field_name), dict):
        return []
    return [
        f"item {item.id!r}: prompt {name!r} takes its reply schema from {response_format.schema_from}, but the "
        f"item's input has no JSON Schema object `{field_name}`; add it, or fix `schema_from:` in prompts/{name}.yaml"
    ]


def models_used(plan: ExperimentPlan) -> list[str]:
    """Every model a run of `plan` calls, once each: the stages', the task's (unless outputs come from the data),
    then those of every evaluator of the run and of its stages (judges)."""
    spec = plan.spec
    evaluators = [*plan.evaluators.values(), *(e for stage in plan.stage_evaluators.values() for e in stage.values())]
    judges = [model for e in evaluators for model in e.models_called(plan.judge_model_name)]
    task = [plan.model_name] if spec.output_from == "model" else []
    return list(dict.fromkeys([*stage_models(spec, plan.model_name), *task, *judges]))


def plan_experiment(
    project: Project,
    name: str,
    *,
    model: str | None = None,
    judge_model: str | None = None,
    model_from: str = "--model",
    missing: MissingVariables | None = None,
) -> ExperimentPlan:
    """Resolve experiment `name` and check every item; raise ValidationFailed on a problem.

    No model is called here: a caller checks the models (`scoregate.engine.preflight`) only once this returns,
    so a rejected experiment never spends a request. `model_from` says where `model` came from (`--model`, or
    `SCOREGATE_MODEL` through make), for the error naming it. Placeholders the items do not fill are added to
    `missing` when given (the caller reports them, grouped across experiments), else reported here, one problem
    per prompt and placeholder.
    """
    spec = project.config.experiments.get(name)
    if spec is None:
        raise ValidationFailed(
            [
                f"{project.config_path}: experiments: no experiment {name!r}"
                + unknown_name(name, project.config.experiments)
            ],
            hint=f"name an experiment defined under `experiments:` in {project.config_path}",
        )
    option_problems = [
        unknown_option_model(option, value, project)
        for option, value in ((model_from, model), ("--judge-model", judge_model))
        if value is not None and value not in project.config.models
    ]
    if option_problems:
        raise ValidationFailed(
            option_problems, hint=f"use a model defined under `models:` in {project.config_path}, or add it there"
        )
    model_name = model or spec.model or project.config.settings.model
    problems = reference_problems(project, name, spec, model_name) + stage_problems(project, name, spec)
    judge_name = judge_model or spec.judge_model or project.config.settings.judge_model or model_name
    if not problems:
        problems += _evaluator_problems(project, name, spec, judge_name) + _placeholder_problems(project, spec)
    if problems:
        raise ValidationFailed(problems, hint="fix scoregate.yaml or add the missing files")
    ref = project.datasets[spec.dataset]
    collector = missing if missing is not None else MissingVariables(project)
    gates_by_name = {g.name: g for g in project.config.gates}
    slice_fields = SliceFieldsSeen([gates_by_name[g] for g in spec.gates if g in gates_by_name], spec.dataset)
    check = _item_checker(project, spec, ref, collector)

    def check_and_note_slices(line: int, item: DatasetItem) -> list[str]:
        slice_fields.add(item.input, item.metadata)
        return check(line, item)

    dataset_scan = scan(ref.path, check_and_note_slices)
    item_problems = dataset_scan.problems + (collector.problems() if missing is None else [])
    if item_problems:
        raise ValidationFailed(item_problems, hint="fix the dataset or the prompt; no run was started")
    if dataset_scan.count and slice_fields.problems(project.config_path, ref.path):
        hint = "fix the gate's `slices:` in scoregate.yaml, or the dataset; no run was started"
        raise ValidationFailed(slice_fields.problems(project.config_path, ref.path), hint=hint)
    if dataset_scan.count == 0:
        raise ValidationFailed([f"{ref.path}: the dataset is empty; add items before running an experiment"])
    return ExperimentPlan(
        name=name,
        spec=spec,
        dataset=ref,
        dataset_scan=dataset_scan,
        prompts={p: project.prompts[p] for p in dict.fromkeys([*stage_prompts(spec), *route_prompts(spec.prompt)])},
        model_name=model_name,
        model=project.config.models[model_name],
        judge_model_name=judge_name,
        evaluators={e: project.evaluators[e] for e in spec.evaluators},
        composites={c: project.config.composites[c] for c in spec.composites},
        gates=[gates_by_name[g] for g in spec.gates],
        stage_evaluators={st.name: {e: project.evaluators[e] for e in st.evaluators} for st in spec.stages[:-1]},
    )


CheckedLine = tuple[str, str]
"""One line of `validate`: its status (`ok`, or `empty` for an experiment `run` would stop on) and what it says."""


def validate_project(project: Project) -> list[CheckedLine]:
    """Check every experiment and dataset; return a (status, line) per checked thing, raise ValidationFailed on
    problems. An experiment on an empty dataset is `empty`, not a problem: a project may ship one to fill later."""
    problems: list[str] = []
    report: list[CheckedLine] = []
    missing = MissingVariables(project)
    for name in project.config.experiments:
        try:
            plan = plan_experiment(project, name, missing=missing)
            report.append(("ok", f"experiment {name}: {plan.dataset_scan.count} items, prompts ok, gates ok"))
        except ValidationFailed as exc:
            if exc.problems and "the dataset is empty" in exc.problems[-1]:
                path = project.datasets[project.config.experiments[name].dataset].path
                report.append(("empty", f"experiment {name}: {path} has no items: `scoregate run {name}` stops on it; "
                                        "add items to it first"))  # fmt: skip
                continue
            problems.extend(exc.problems)
    problems.extend(missing.problems())
    for ref in project.datasets.values():
        validator = _input_validator(ref)

        def schema_check(_line: int, item: DatasetItem, v: Any = validator, r: DatasetRef = ref) -> list[str]:
            return input_schema_problems(r, v, item)

        found = scan(ref.path, schema_check)
        problems.extend(found.problems)
        report.append(("ok", f"dataset {ref.name}: {found.count} items"))
    production_lines, production_problems = production_checks(project)
    report += [("ok", line) for line in production_lines]
    problems += production_problems
    try:
        from scoregate.catalog.dashboards import load_dashboards

        for _path, dashboard in load_dashboards(project.root).values():
            report.append(("ok", f"dashboard {dashboard.name}: {len(dashboard.widgets)} widgets"))
    except ValidationFailed as exc:
        problems.extend(exc.problems)
    if problems:
        raise ValidationFailed(sorted(set(problems), key=problems.index))
    return report
