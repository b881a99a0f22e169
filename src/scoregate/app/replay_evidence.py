"""The `replay:` promotion rule's evidence: the newest replay of the candidate version, its size and its verdict."""

from __future__ import annotations

from typing import Any

from scoregate.app.promotion_evidence import Evidence
from scoregate.app.promotion_runs import candidate_runs, local_runs, mlflow_runs
from scoregate.app.replay_record import read_replay
from scoregate.app.run.run_options import runs_dir
from scoregate.catalog.project import Project
from scoregate.catalog.promotion_rules import ReplayRule
from scoregate.sinks.mlflow.client import project_client
from scoregate.support.figures import version_name


def replay_command(experiment: str, rule: ReplayRule, version: int | str) -> str:
    """The command that makes the replay the rule asks for."""
    pinned = f" --prompt-version {version}" if isinstance(version, int) else ""
    return f"scoregate replay {experiment} --production {rule.min_items}{pinned}"


def replay_evidence(project: Project, prompt: str, version: int | str, rule: ReplayRule, client: Any) -> Evidence:
    """The rule's evidence for `version` of `prompt`: its newest replay (a problem when there is none, it is smaller
    than `min_items`, or its verdict is `worse` under `not_worse`)."""
    assert rule.experiment is not None  # ProjectConfig.promotion_rule fills it in
    experiment = f"{rule.experiment}-replay"
    title, command = f"replay of {rule.experiment}", replay_command(rule.experiment, rule, version)
    local = local_runs(runs_dir(project), experiment, prompt, version)
    mirrored = mlflow_runs(client, project.config.project, experiment, prompt, version)
    for run in candidate_runs(local, mirrored):
        replay = read_replay(runs_dir(project) / run.run_id) if run.local and run.run_id else None
        if replay is None or run.flaw is not None:
            continue
        problem = None
        if replay.items < rule.min_items:
            problem = f"replayed {replay.items} items, the rule asks for at least {rule.min_items}: run `{command}`"
        elif rule.not_worse and replay.verdict == "worse":
            problem = f"the candidate is worse than production ({replay.rate_words()}); the rule asks for not worse"
        return Evidence(
            title,
            mlflow_run_id=run.mlflow_run_id,
            scoregate_run_id=run.run_id,
            verdict=f"{replay.verdict}, {replay.rate_words()}",
            problem=problem,
            model=run.model,
            in_mlflow=run.mlflow_run_id is not None,
        )
    return Evidence(title, problem=f"no replay of {version_name(prompt, version)}: run `{command}`")


def rule_evidence(project: Project, prompt: str, version: int | str) -> list[Evidence]:
    """The replay's evidence when the prompt's `promotion:` rule asks for one, else none."""
    rule = project.config.promotion_rule(prompt)
    if rule is None or rule.replay is None:
        return []
    return [replay_evidence(project, prompt, version, rule.replay, project_client(project.root))]
