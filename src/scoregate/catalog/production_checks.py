"""`scoregate validate` on the `production:` section: each entry's experiment, prompt, mapping paths and input fields,
every problem as `scoregate.yaml:LINE: production.NAME.FIELD: what is wrong and what to do`."""

from __future__ import annotations

from scoregate.catalog.production import ProductionSpec, input_field_problems, path_problems, yaml_line
from scoregate.catalog.project import Project
from scoregate.catalog.routing import route_prompts
from scoregate.support.suggest import unknown_name


def production_prompt(project: Project, name: str, spec: ProductionSpec) -> str | None:
    """The prompt an entry's generations are linked to: the filter's, else the experiment's single prompt."""
    if spec.filter.prompt.name is not None:
        return spec.filter.prompt.name
    experiment = project.config.experiments.get(name)
    prompts = route_prompts(experiment.prompt) if experiment is not None else []
    return prompts[0] if len(prompts) == 1 else None


def _entry_problems(project: Project, name: str, spec: ProductionSpec) -> list[tuple[str, str]]:
    experiment = project.config.experiments.get(name)
    if experiment is None:
        return [("", f"no experiment {name!r} under `experiments:`" + unknown_name(name, project.config.experiments))]
    problems = path_problems(spec)
    prompt = production_prompt(project, name, spec)
    if prompt is None:
        problems.append(("filter.prompt.name", "the experiment routes between prompts: name the one production uses"))
    elif prompt not in project.prompts:
        problems.append(
            (
                "filter.prompt.name",
                f"no prompt {prompt!r} (prompts/{prompt}.yaml)" + unknown_name(prompt, project.prompts),
            )
        )
    dataset = project.datasets.get(experiment.dataset)
    if dataset is not None:
        problems += input_field_problems(spec, dataset.meta.input_schema)
    return problems


def production_checks(project: Project) -> tuple[list[str], list[str]]:
    """(report lines, problems) for every `production:` entry; a problem names the file, line and field."""
    lines, problems = [], []
    for name, spec in project.config.production.items():
        found = _entry_problems(project, name, spec)
        for field, problem in found:
            keys = ("production", name, *[k for k in field.split(".") if k])
            line = yaml_line(project.config_path, keys)
            where = f"{project.config_path}:{line}" if line else str(project.config_path)
            problems.append(f"{where}: production.{name}{'.' + field if field else ''}: {problem}")
        if not found:
            filters = [
                f"{k} {v}" for k, v in (("trace", spec.filter.trace_name), ("env", spec.filter.environment)) if v
            ]
            lines.append(
                f"production {name}: {len(spec.mapping.input)} input fields mapped"
                + (f" ({', '.join(filters)})" if filters else "")
            )
    return lines, problems
