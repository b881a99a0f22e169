"""Resolve an experiment into a plan and check it against its dataset before any model call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoregate.catalog.datasets import DatasetRef, DatasetScan, scan
from scoregate.catalog.models import (
    CompositeSpec,
    CountersSpec,
    CustomSpec,
    DatasetItem,
    EvaluatorSpec,
    ExperimentSpec,
    ExtractionSpec,
    FactRecallSpec,
    GateSpec,
    LlmJudgeSpec,
    ModelSpec,
    PromptRoute,
    PromptSpec,
    TagsSpec,
)
from scoregate.catalog.project import Project
from scoregate.catalog.routing import RouteError, choose_prompt, route_prompts
from scoregate.catalog.stages import live_variables, stage_metric_names, stage_models, stage_problems, stage_prompts
from scoregate.catalog.templates import malformed_placeholders, prompt_texts, prompt_variables
from scoregate.errors import ScoregateError, ValidationFailed

RUN_METRICS = (
    "success_rate",
    "error_count",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_mean_ms",
    "tokens_in_total",
    "tokens_out_total",
    "cost_usd_total",
    "retries_total",
)
"""Run-level metrics every run reports, usable in gates beside score keys and composites."""


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


def evaluator_score_keys(spec: EvaluatorSpec) -> list[str]:
    """Return the score keys an evaluator file declares."""
    if isinstance(spec, CountersSpec):
        return [c.score_key for c in spec.counters]
    if isinstance(spec, ExtractionSpec):
        from scoregate.scoring.extraction.scores import METRIC_KEYS

        return list(METRIC_KEYS)
    if isinstance(spec, FactRecallSpec):
        return [spec.key, spec.key + "_facts"]
    if isinstance(spec, CustomSpec):
        return [spec.score_key]
    if isinstance(spec, TagsSpec):
        from scoregate.scoring.tags_evaluator import TagsEvaluator
        from scoregate.tags.run_summary import GATE_METRIC_KEYS

        return [k for k, _ in TagsEvaluator(spec).score_keys()] + list(GATE_METRIC_KEYS)
    keys = [spec.score.key, *(e.key for e in spec.extra)]
    return [*keys, spec.reasoning_key] if spec.reasoning_key else keys


def known_metrics(project: Project, evaluators: list[str], composites: list[str]) -> set[str]:
    """Return every metric name a gate of this experiment may name."""
    names = set(RUN_METRICS) | set(composites)
    for name in evaluators:
        if name in project.evaluators:
            names.update(evaluator_score_keys(project.evaluators[name]))
    return names


def _reference_problems(project: Project, name: str, spec: ExperimentSpec, model_name: str) -> list[str]:
    where = f"{project.config_path}: experiments.{name}"
    problems = []
    if spec.dataset not in project.datasets:
        problems.append(f"{where}.dataset: no dataset {spec.dataset!r} (datasets/{spec.dataset}.jsonl)")
    problems += [
        f"{where}.prompt: no prompt {p!r} (prompts/{p}.yaml)"
        for p in route_prompts(spec.prompt)
        if p not in project.prompts
    ]
    if model_name not in project.config.models:
        problems.append(f"{where}.model: no model {model_name!r} under `models:` in scoregate.yaml")
    judge = spec.judge_model or project.config.settings.judge_model or model_name
    if judge not in project.config.models:
        problems.append(f"{where}.judge_model: no model {judge!r} under `models:` in scoregate.yaml")
    problems += [
        f"{where}.evaluators: {e!r} is listed more than once; list each evaluator once"
        for e in dict.fromkeys(spec.evaluators)
        if spec.evaluators.count(e) > 1
    ]
    for e in spec.evaluators:
        evaluator = project.evaluators.get(e)
        if evaluator is None:
            problems.append(f"{where}.evaluators: no evaluator {e!r} (evaluators/{e}.yaml)")
        elif isinstance(evaluator, LlmJudgeSpec | FactRecallSpec) and evaluator.model not in (
            None,
            *project.config.models,
        ):
            problems.append(f"{project.source('evaluator', e)}: model: no model {evaluator.model!r} in scoregate.yaml")
        elif isinstance(evaluator, CustomSpec):
            from scoregate.errors import ScoregateError
            from scoregate.scoring.custom import load_function

            try:
                load_function(evaluator.function, where=f"{project.source('evaluator', e)}: function")
            except ScoregateError as exc:
                problems.append(exc.render())
    problems += [
        f"{where}.composites: no composite {c!r} under `composites:`"
        for c in spec.composites
        if c not in project.config.composites
    ]
    gates_by_name = {g.name: g for g in project.config.gates}
    known = known_metrics(project, spec.evaluators, spec.composites) | stage_metric_names(project, spec)
    for gate_name in spec.gates:
        gate = gates_by_name.get(gate_name)
        if gate is None:
            problems.append(f"{where}.gates: no gate {gate_name!r} under `gates:`")
        else:
            problems += _gate_problems(project, gate, known)
    for comp in spec.composites:
        for part in project.config.composites.get(comp, CompositeSpec(weights={"_": 1})).weights:
            if comp in project.config.composites and part not in known:
                problems.append(f"{project.config_path}: composites.{comp}: unknown score {part!r}")
    return problems


def _gate_problems(project: Project, gate: GateSpec, known: set[str]) -> list[str]:
    """A gate's metric must be measured, and the evaluator whose calibration it requires must exist."""
    where = f"{project.config_path}: gates.{gate.name}"
    problems = []
    if gate.metric not in known:
        problems.append(
            f"{where}.metric: unknown metric {gate.metric!r}; this experiment measures: {', '.join(sorted(known))}"
        )
    calibration = gate.requires_calibration
    if calibration is not None and calibration.evaluator not in project.evaluators:
        problems.append(
            f"{where}.requires_calibration.evaluator: no evaluator {calibration.evaluator!r} "
            f"(evaluators/{calibration.evaluator}.yaml)"
        )
    return problems


def _evaluator_problems(project: Project, name: str, spec: ExperimentSpec, judge: str) -> list[str]:
    """Build every evaluator once (the checks a run would hit later) and reject a score key written twice."""
    from scoregate.scoring.registry import build_evaluator

    problems = []
    writers: dict[str, str] = {}
    for e in spec.evaluators:
        evaluator = project.evaluators[e]
        source = project.source("evaluator", e)
        try:
            build_evaluator(evaluator, default_judge_model=judge)
        except ScoregateError as exc:
            problems.append(f"{source}: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            continue
        for key in evaluator_score_keys(evaluator):
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


def _item_checker(project: Project, spec: ExperimentSpec, ref: DatasetRef) -> Any:
    input_validator = _input_validator(ref)
    variables = {name: set(prompt_variables(p)) for name, p in project.prompts.items()}
    from_stages = live_variables(spec)

    def check(_line: int, item: DatasetItem) -> list[str]:
        found = input_schema_problems(ref, input_validator, item)
        try:
            prompt_name = choose_prompt(spec.prompt, item.input)
        except RouteError as exc:
            return [*found, f"item {item.id!r}: cannot choose a prompt: {exc}"]
        for name in dict.fromkeys([*stage_prompts(spec), prompt_name]):
            prompt = project.prompts.get(name)
            if prompt is None:
                continue
            missing = variables[name] - item.input.keys() - prompt.variables.keys() - from_stages
            found += [
                f"item {item.id!r}: prompt {name!r} uses {{{{{v}}}}} but the item's input has no "
                f"`{v}`; add it to the item or give a default under `variables:` in prompts/{name}.yaml"
                + (" (stage_inputs: fixture reads earlier stages' outputs from the item)" if spec.stages else "")
                for v in sorted(missing)
            ]
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


def models_used(project: Project, spec: ExperimentSpec, model_name: str, judge_name: str) -> list[str]:
    """Every model a run of `spec` calls, once each: the stages', the task's, then the judges'."""
    evaluators = [project.evaluators[e] for e in spec.evaluators]
    evaluators += [project.evaluators[e] for stage in spec.stages[:-1] for e in stage.evaluators]
    judges = [e.model or judge_name for e in evaluators if isinstance(e, LlmJudgeSpec | FactRecallSpec)]
    task = [model_name] if spec.output_from == "model" else []
    return list(dict.fromkeys([*stage_models(spec, model_name), *task, *judges]))


def plan_experiment(
    project: Project,
    name: str,
    *,
    model: str | None = None,
    judge_model: str | None = None,
) -> ExperimentPlan:
    """Resolve experiment `name` and check every item; raise ValidationFailed on a problem.

    No model is called here: a caller checks the models (`scoregate.engine.preflight`) only once this returns,
    so a rejected experiment never spends a request.
    """
    spec = project.config.experiments.get(name)
    if spec is None:
        known = ", ".join(sorted(project.config.experiments)) or "none"
        raise ValidationFailed([f"{project.config_path}: experiments: no experiment {name!r} (defined: {known})"])
    model_name = model or spec.model or project.config.settings.model
    problems = _reference_problems(project, name, spec, model_name) + stage_problems(project, name, spec)
    if judge_model is not None and judge_model not in project.config.models:
        known = ", ".join(sorted(project.config.models))
        problems.append(f"--judge-model: no model {judge_model!r} under `models:` in scoregate.yaml (defined: {known})")
    judge_name = judge_model or spec.judge_model or project.config.settings.judge_model or model_name
    if not problems:
        problems += _evaluator_problems(project, name, spec, judge_name) + _placeholder_problems(project, spec)
    if problems:
        raise ValidationFailed(problems, hint="fix scoregate.yaml or add the missing files")
    ref = project.datasets[spec.dataset]
    dataset_scan = scan(ref.path, _item_checker(project, spec, ref))
    if dataset_scan.problems:
        raise ValidationFailed(dataset_scan.problems, hint="fix the dataset; no run was started")
    if dataset_scan.count == 0:
        raise ValidationFailed([f"{ref.path}: the dataset is empty; add items before running an experiment"])
    gates_by_name = {g.name: g for g in project.config.gates}
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


def validate_project(project: Project) -> list[str]:
    """Check every experiment and dataset; return a line per checked thing, raise ValidationFailed on problems."""
    problems: list[str] = []
    report: list[str] = []
    for name in project.config.experiments:
        try:
            plan = plan_experiment(project, name)
            report.append(f"experiment {name}: {plan.dataset_scan.count} items, prompts ok, gates ok")
        except ValidationFailed as exc:
            if exc.problems and "the dataset is empty" in exc.problems[-1]:
                report.append(f"experiment {name}: dataset is empty")
                continue
            problems.extend(exc.problems)
    for ref in project.datasets.values():
        validator = _input_validator(ref)

        def schema_check(_line: int, item: DatasetItem, v: Any = validator, r: DatasetRef = ref) -> list[str]:
            return input_schema_problems(r, v, item)

        found = scan(ref.path, schema_check)
        problems.extend(found.problems)
        report.append(f"dataset {ref.name}: {found.count} items")
    try:
        from scoregate.catalog.dashboards import load_dashboards

        for _path, dashboard in load_dashboards(project.root).values():
            report.append(f"dashboard {dashboard.name}: {len(dashboard.widgets)} widgets")
    except ValidationFailed as exc:
        problems.extend(exc.problems)
    if problems:
        raise ValidationFailed(sorted(set(problems), key=problems.index))
    return report
