"""The evidence a promotion needs: per experiment under `promotion:`, the newest valid MLflow run of the version.

A run is valid evidence when it ran the prompt version (tag `prompt.<name>.version`), on the whole
dataset (param `limit` = None), finished, and was judged by the gates the experiment has now (param
`gates_hash`). The newest valid run's verdict counts; a gate `fail` or `incomplete` blocks promotion.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from scoregate.app.receipts import sha256_text
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.sinks.mlflow.client import project_client
from scoregate.sinks.mlflow.experiments import find_experiment
from scoregate.sinks.mlflow.run_mirror import RUN_ID_TAG

MAX_RUNS = 200


@dataclass(frozen=True)
class Evidence:
    """What one experiment says about a prompt version: its newest valid run, or why there is none."""

    experiment: str
    mlflow_run_id: str | None = None
    scoregate_run_id: str | None = None
    verdict: str | None = None
    gates: dict[str, str] = field(default_factory=dict)
    gates_hash: str | None = None
    problem: str | None = None

    @property
    def passed(self) -> bool:
        """True when this experiment's gates all passed."""
        return self.problem is None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form kept in the audit record."""
        return asdict(self)


def experiment_gates_hash(project: Project, experiment: str) -> str:
    """Return the gates hash a run of `experiment` records today (same formula as the receipts)."""
    by_name = {g.name: g for g in project.config.gates}
    gates = [by_name[name] for name in project.config.experiments[experiment].gates if name in by_name]
    return sha256_text(json.dumps([g.model_dump(mode="json") for g in gates], sort_keys=True))


def promotion_experiments(project: Project, prompt: str) -> list[str]:
    """Return the experiments whose gates must pass before `prompt` is promoted; raise when none is configured."""
    experiments = project.config.promotion.get(prompt)
    if not experiments:
        raise ScoregateError(
            f"scoregate.yaml lists no experiments to gate the promotion of prompt {prompt!r}",
            where=f"{project.config_path}: promotion",
            hint=f"add e.g. `promotion: {{{prompt}: [<experiment>, ...]}}`",
        )
    unknown = [e for e in experiments if e not in project.config.experiments]
    if unknown:
        raise ScoregateError(
            f"promotion of {prompt!r} names unknown experiment(s): {', '.join(unknown)}",
            where=f"{project.config_path}: promotion.{prompt}",
        )
    return experiments


def _why_invalid(run: Any, gates_hash: str) -> str | None:
    if run.data.tags.get("scoregate.valid") == "false":  # `scoregate runs invalidate`
        return f"was invalidated: {run.data.tags.get('scoregate.invalid_reason')}"
    if run.info.status != "FINISHED":
        return f"did not finish (status {run.info.status})"
    if run.data.params.get("limit", "None") != "None":
        return f"ran only {run.data.params['limit']} items (--limit)"
    if run.data.params.get("gates_hash") != gates_hash:
        return "was judged by other gates than scoregate.yaml has now"
    return None


def version_name(prompt: str, version: int | str) -> str:
    """`NAME v3` for a Langfuse version, `NAME@local-1a2b3c4d` for a prompt file's."""
    return f"{prompt} v{version}" if isinstance(version, int) else f"{prompt}@{version}"


def gather_evidence(project: Project, prompt: str, version: int | str) -> list[Evidence]:
    """Return one Evidence per experiment listed under `promotion: {prompt: [...]}` in scoregate.yaml."""
    client = project_client(project.root)
    return [
        _evidence(client, project, experiment, prompt, version) for experiment in promotion_experiments(project, prompt)
    ]


def _evidence(client: Any, project: Project, experiment: str, prompt: str, version: int | str) -> Evidence:
    gates_hash = experiment_gates_hash(project, experiment)
    rerun = f"run it: `scoregate run {experiment} --prompt-version {version}`"
    if isinstance(version, str):  # a prompt file's own version: a run on the local files makes the evidence
        rerun = f"run it on the prompt files as they are: `scoregate run {experiment} --no-langfuse`"
    found = find_experiment(client, project.config.project, experiment)
    runs = []
    if found is not None:
        filters = f"tags.`prompt.{prompt}.version` = '{version}' and tags.`scoregate.experiment` = '{experiment}'"
        runs = client.search_runs(
            [found.experiment_id], filter_string=filters, order_by=["attributes.start_time DESC"], max_results=MAX_RUNS
        )
    if not runs:
        return Evidence(
            experiment, gates_hash=gates_hash, problem=f"no run of {version_name(prompt, version)}; {rerun}"
        )
    valid = [r for r in runs if _why_invalid(r, gates_hash) is None]
    if not valid:
        newest = runs[0]
        why = _why_invalid(newest, gates_hash)
        return Evidence(
            experiment,
            newest.info.run_id,
            newest.data.tags.get(RUN_ID_TAG),
            gates_hash=gates_hash,
            problem=f"no valid run of {version_name(prompt, version)}: the newest "
            f"({newest.data.tags.get(RUN_ID_TAG)}) {why}; {rerun}",
        )
    run = valid[0]
    tags = run.data.tags
    gates = {key.removeprefix("gate."): value for key, value in sorted(tags.items()) if key.startswith("gate.")}
    verdict = tags.get("scoregate.verdict")
    problem = None
    if not gates:
        problem = "the experiment has no gates, so nothing was checked"
    elif verdict != "pass" or any(status != "pass" for status in gates.values()):
        failing = ", ".join(f"{name} {status}" for name, status in gates.items() if status != "pass")
        problem = f"gates did not pass in run {tags.get(RUN_ID_TAG)}: {failing or verdict}"
    return Evidence(experiment, run.info.run_id, tags.get(RUN_ID_TAG), verdict, gates, gates_hash, problem)
