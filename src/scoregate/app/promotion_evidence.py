"""The evidence a promotion needs: per experiment under `promotion:`, the newest valid MLflow run of the version.

A run is valid evidence when it ran the prompt version (tag `prompt.<name>.version`), finished, on the whole
dataset (param `limit` = None, and not stopped early by `run --stop-early`: tag `scoregate.status`, or the
`scoregate.stop_early` tag of a run mirrored before that tag), on the model the experiment runs on (param
`model` = the experiment's `model:` in scoregate.yaml, else `settings.model`), and was judged by the gates
the experiment has now (param `gates_hash`). The newest valid run's verdict counts; a gate `fail` or
`incomplete` blocks promotion.
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
from scoregate.sinks.mlflow.run_mirror import QUARANTINE_KEYS, RUN_ID_TAG
from scoregate.store.stop_record import STOPPED_EARLY

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
    model: str | None = None
    """The model the run ran on (its name in scoregate.yaml)."""

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


def experiment_model(project: Project, experiment: str) -> str:
    """The model `experiment` runs on: its `model:` in scoregate.yaml, else `settings.model`."""
    return project.config.experiments[experiment].model or project.config.settings.model


def _stopped_early(run: Any) -> str | None:
    """`stopped early at 10 of 60 items` for a run `run --stop-early` ended before its last item, else None."""
    tags, metrics = run.data.tags, run.data.metrics
    status = tags.get("scoregate.status")
    if status != STOPPED_EARLY and not str(tags.get("scoregate.stop_early", "")).startswith("stopped at"):
        return None
    done, total = metrics.get("stop_early.items_run"), metrics.get("stop_early.items_total")
    if done is None or total is None:
        return f"stopped early ({tags.get('scoregate.stop_early', 'status stopped_early')})"
    return f"stopped early at {int(done)} of {int(total)} items"


def _model_of(run: Any) -> str | None:
    """The run's model by its name in scoregate.yaml: param `model_name` (param `model` held the provider's model
    id in runs mirrored by earlier versions)."""
    params = run.data.params
    return params.get("model_name") or params.get("model")


def _why_invalid(run: Any, gates_hash: str, model: str, experiment: str) -> str | None:
    tags, params = run.data.tags, run.data.params
    if tags.get("scoregate.valid") == "false":  # `scoregate runs invalidate`
        return f"was invalidated: {tags.get('scoregate.invalid_reason')}"
    if run.info.status != "FINISHED":
        return f"did not finish (status {run.info.status})"
    if stopped := _stopped_early(run):
        return f"{stopped}: not the whole dataset"
    if tags.get("scoregate.status", "finished") != "finished":
        return f"did not finish (status {tags['scoregate.status']})"
    if params.get("limit", "None") != "None":
        return f"ran only {params['limit']} items (--limit)"
    ran_on = _model_of(run)
    if ran_on is None:
        return "records no model (param `model_name`)"
    if ran_on != model:
        return f"ran on model {ran_on!r}, not {model!r}, the model experiment {experiment} runs on (scoregate.yaml)"
    if params.get("gates_hash") != gates_hash:
        return "was judged by other gates than scoregate.yaml has now"
    return None


def version_label(version: int | str) -> str:
    """`v3` for a Langfuse version, `local-1a2b3c4d` for a prompt file's."""
    return f"v{version}" if isinstance(version, int) else str(version)


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
    gates_hash, model = experiment_gates_hash(project, experiment), experiment_model(project, experiment)
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
    why = [_why_invalid(r, gates_hash, model, experiment) for r in runs]
    if all(w is not None for w in why):
        newest = runs[0]
        return Evidence(
            experiment,
            newest.info.run_id,
            newest.data.tags.get(RUN_ID_TAG),
            gates_hash=gates_hash,
            problem=f"no valid run of {version_name(prompt, version)}: the newest "
            f"({newest.data.tags.get(RUN_ID_TAG)}) {why[0]}; {rerun}",
            model=_model_of(newest),
        )
    chosen = next(i for i, w in enumerate(why) if w is None)
    run = runs[chosen]
    tags = run.data.tags
    gates = {n: tags[f"gate.{n}"] for n in project.config.experiments[experiment].gates if f"gate.{n}" in tags}
    verdict = tags.get("scoregate.verdict")
    problem = None
    if not gates:
        problem = "the experiment has no gates, so nothing was checked"
    else:
        failing = unpassed_gates(gates, tags, project.config.settings.flaky.promotion)
        if verdict not in ("pass", None) and not failing:
            failing = [str(verdict)]
        if failing:
            problem = f"gates did not pass in run {tags.get(RUN_ID_TAG)}: {'; '.join(failing)}"
    if problem is not None and chosen:  # say which newer runs were passed over, and why
        newer = runs[0]
        problem += f" (newer run {newer.data.tags.get(RUN_ID_TAG)} skipped: it {why[0]})"
    return Evidence(
        experiment, run.info.run_id, tags.get(RUN_ID_TAG), verdict, gates, gates_hash, problem, _model_of(run)
    )


def unpassed_gates(gates: dict[str, str], tags: dict[str, str], rule: str) -> list[str]:
    """Each gate of an evidence run that does not count as passed, with why: not `pass`, or passed with flaky items
    kept out where `settings.flaky.promotion` (`rule`) refuses that (tag `gate.<name>.quarantine`)."""
    problems = []
    for name, words in gates.items():
        if words.split(" ", 1)[0] != "pass":
            problems.append(f"{name} {words}")
            continue
        kept = quarantine_counts(tags.get(f"gate.{name}.quarantine"))
        if kept is None or rule == "allow" or (rule == "refuse_if_breaking" and not kept["breaking"]):
            continue
        breaking = f"; {kept['breaking']} of them broke it in that run" if kept["breaking"] else ""
        problems.append(f"{name} {words}{breaking} (settings.flaky.promotion is {rule})")
    return problems


def quarantine_counts(tag: str | None) -> dict[str, int] | None:
    """The tag `gate.<name>.quarantine` read back (`kept_out`, `breaking`, `gated`, `total`); None without one."""
    if not tag:
        return None
    try:
        counts = json.loads(tag)
        return {key: int(counts[key]) for key in QUARANTINE_KEYS}
    except (ValueError, KeyError, TypeError):
        return {"kept_out": 1, "breaking": 1, "gated": 0, "total": 0}  # unreadable: assume the worst
