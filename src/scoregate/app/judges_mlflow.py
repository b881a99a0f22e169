"""The same judges in MLflow's judge registry, in step with Langfuse (`judges apply`).

Each LLM-judge file that Langfuse holds is registered as an MLflow judge (`mlflow.genai.judges.make_judge`, then
`register` into the MLflow experiment `scoregate judges`), named by its score key with the same description marker
(file and definition hash): a definition MLflow already holds under that name is not registered again, a changed
one becomes the next version. Checked on MLflow 3.17's embedded sqlite store; a plan creates neither the store nor
the experiment. MLflow's judge templates take whole fields, not JSONPaths: each `{{variable}}` becomes
`{{ outputs }}` (output), `{{ inputs }}` (input.*, metadata.*) or `{{ expectations }}` (expected_output). An MLflow
failure is reported in one line and loses nothing in Langfuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scoregate.catalog.models import ModelSpec
from scoregate.integrations.langfuse.evaluators_body import JudgeBody, read_marker
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec

EXPERIMENT = "scoregate judges"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_FIELDS = {"output": "outputs", "expected_output": "expectations", "input": "inputs", "metadata": "inputs"}


@dataclass(frozen=True)
class MlflowJudge:
    """One judge file in MLflow's registry: its name (the score key) and the version holding the file now."""

    file: str
    name: str
    action: Literal["registered", "unchanged", "to register"]
    version: int | None


def instructions(spec: LlmJudgeSpec) -> str:
    """The rubric with each variable as the MLflow field it reads."""
    return _PLACEHOLDER.sub(
        lambda m: "{{ " + _FIELDS[spec.variables[m.group(1)].partition(".")[0]] + " }}", spec.prompt
    )


def _value_type(spec: LlmJudgeSpec) -> Any:
    score = spec.score
    if score.data_type == "boolean":
        return bool
    if score.data_type == "categorical":
        return Literal[tuple(score.categories or [])]
    integral = score.range is not None and all(float(b).is_integer() for b in score.range)
    return int if integral else float


def register_judges(
    root: Path, judges: list[tuple[JudgeBody, LlmJudgeSpec, ModelSpec]], *, dry_run: bool
) -> list[MlflowJudge]:
    """Register each judge's current definition in MLflow unless a version of it is there already."""
    from mlflow.exceptions import MlflowException
    from mlflow.genai.judges import make_judge
    from mlflow.genai.scorers.registry import list_scorer_versions

    from scoregate.sinks.mlflow.client import SQLITE, creation_lock, project_client, tracking_uri

    uri = tracking_uri(root)
    if dry_run and uri.startswith(SQLITE) and not Path(uri.removeprefix(SQLITE)).is_file():
        return [MlflowJudge(body.file, body.body["name"], "to register", None) for body, _, _ in judges]
    client = project_client(root)
    with creation_lock(uri):
        found = client.get_experiment_by_name(EXPERIMENT)
        if found is None and dry_run:
            return [MlflowJudge(body.file, body.body["name"], "to register", None) for body, _, _ in judges]
        experiment = found.experiment_id if found is not None else client.create_experiment(EXPERIMENT)
    done = []
    for body, spec, model in judges:
        name = body.body["name"]
        try:
            versions = list_scorer_versions(name=name, experiment_id=experiment)
        except MlflowException:
            versions = []
        same = [
            v for s, v in versions if read_marker(getattr(s, "description", None)) == (body.file, body.definition_hash)
        ]
        if same:
            done.append(MlflowJudge(body.file, name, "unchanged", min(same)))
            continue
        if dry_run:
            done.append(MlflowJudge(body.file, name, "to register", None))
            continue
        judge = make_judge(
            name=name,
            instructions=instructions(spec),
            model=f"{model.provider}:/{model.model}",
            description=body.body["description"],
            feedback_value_type=_value_type(spec),
        )
        judge.register(experiment_id=experiment)
        latest = max((v for _, v in list_scorer_versions(name=name, experiment_id=experiment)), default=None)
        done.append(MlflowJudge(body.file, name, "registered", latest))
    return done
