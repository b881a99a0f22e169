"""The evidence a promotion needs: per experiment under `promotion:`, the newest valid run of the version.

The runs are the local run store's (the system of record, mirrored to MLflow or not) and MLflow's runs made elsewhere
(`scoregate.app.promotion_runs`). A run is valid evidence when it ran the prompt version, finished, on the whole
dataset (no `--limit`, not stopped early by `run --stop-early`), on the model the experiment runs on (its `model:` in
scoregate.yaml, else `settings.model`), was judged by the gates the experiment has now (the gates hash), and was not
invalidated. The newest valid run's verdict counts; a gate `fail` or `incomplete` blocks promotion. A run that is no
evidence is named with why and with the fix for that cause.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from scoregate.app.promotion_runs import CandidateRun, Flaw, candidate_runs, local_runs, mlflow_runs
from scoregate.app.run.receipts import sha256_text
from scoregate.app.run.run_options import runs_dir
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.sinks.mlflow.client import project_client
from scoregate.support.figures import version_name


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
    skipped: str | None = None
    """The newer runs of the version passed over for this one, with why (`newer run X: it ran on ...`)."""
    in_mlflow: bool = True
    """False for a run held in the local run store alone (made with `--no-mlflow`, or MLflow was down)."""

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
    rule = project.config.promotion_rule(prompt)
    experiments = rule.experiments if rule is not None else []
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


def gather_evidence(project: Project, prompt: str, version: int | str) -> list[Evidence]:
    """Return one Evidence per experiment listed under `promotion: {prompt: [...]}` in scoregate.yaml."""
    client = project_client(project.root)
    evidence = []
    for experiment in promotion_experiments(project, prompt):
        local = local_runs(runs_dir(project), experiment, prompt, version)
        mirrored = mlflow_runs(client, project.config.project, experiment, prompt, version)
        evidence.append(_evidence(candidate_runs(local, mirrored), project, experiment, prompt, version))
    return evidence


def _flaw(run: CandidateRun, gates_hash: str, model: str, experiment: str) -> Flaw | None:
    """Why `run` is no evidence for `experiment` (its own flaw, else its model or gates), or None."""
    if run.flaw is not None:
        return run.flaw
    if run.model is None:
        return Flaw("no_model", "records no model")
    if run.model != model:
        why = f"ran on model {run.model!r}, not {model!r}, the model experiment {experiment} runs on (scoregate.yaml)"
        return Flaw("model", why)
    if run.gates_hash != gates_hash:
        return Flaw("gates", "was judged by other gates than scoregate.yaml has now")
    return None


def fix_for(flaw: Flaw | None, run: CandidateRun | None, command: str, model: str) -> str:
    """What makes the evidence that `run` (None: no run at all) is not: each cause its own command."""
    if flaw is None:
        return f"run it: `{command}`"
    if flaw.cause == "model":
        return f"run it on model {model!r}: `{command} --model {model}`"
    if flaw.cause == "stopped_early":
        also = f", or continue this one: `scoregate run --resume {run.run_id}`" if run and run.local else ""
        return f"run the whole dataset: `{command}` (without --stop-early){also}"
    if flaw.cause == "limit":
        return f"run the whole dataset: `{command}` (without --limit)"
    if flaw.cause == "gates":
        return f"run it again under today's gates: `{command}`"
    if flaw.cause == "unfinished" and run is not None and run.local:
        return f"finish it: `scoregate run --resume {run.run_id}`, or run it again: `{command}`"
    return f"run it again: `{command}`"


def _evidence(runs: list[CandidateRun], project: Project, experiment: str, prompt: str, version: int | str) -> Evidence:
    gates_hash, model = experiment_gates_hash(project, experiment), experiment_model(project, experiment)
    command = f"scoregate run {experiment}" + (f" --prompt-version {version}" if isinstance(version, int) else "")
    if not runs:
        where = "" if isinstance(version, int) else " on the prompt files as they are"
        return Evidence(
            experiment,
            gates_hash=gates_hash,
            problem=f"no run of {version_name(prompt, version)}; run it{where}: `{command}`",
        )
    flaws = [_flaw(r, gates_hash, model, experiment) for r in runs]
    if all(f is not None for f in flaws):
        newest, flaw = runs[0], flaws[0]
        return Evidence(
            experiment, newest.mlflow_run_id, newest.run_id, gates_hash=gates_hash,
            problem=f"no valid run of {version_name(prompt, version)}: the newest ({newest.run_id}) "
            f"{flaw.text if flaw else ''}; {fix_for(flaw, newest, command, model)}",
            model=newest.model, in_mlflow=newest.mlflow_run_id is not None,
        )  # fmt: skip
    chosen = next(i for i, f in enumerate(flaws) if f is None)
    run = runs[chosen]
    gates = {n: run.gates[n] for n in project.config.experiments[experiment].gates if n in run.gates}
    problem = None
    if not gates:
        problem = "the experiment has no gates, so nothing was checked"
    else:
        rule = project.config.settings.flaky.promotion
        failing = unpassed_gates(gates, run.quarantine, rule)
        if run.verdict not in ("pass", None) and not failing:
            failing = [str(run.verdict)]
        if failing:
            problem = f"gates did not pass in run {run.run_id}: {'; '.join(failing)}"
        if any(rests_on_quarantine(words, run.quarantine.get(name), rule) for name, words in gates.items()):
            problem = (
                f"{problem}; the pass rests on flaky items kept out: `scoregate items flaky {experiment}` names "
                f"them; steady or fix them, then run it again: `{command}`"
            )
    skipped = _skipped(runs[:chosen], flaws[:chosen])
    if problem is not None and skipped:
        problem += f" (skipped {skipped})"
    return Evidence(
        experiment, run.mlflow_run_id, run.run_id, run.verdict, gates, gates_hash, problem, run.model, skipped,
        run.mlflow_run_id is not None,
    )  # fmt: skip


def _skipped(newer: list[CandidateRun], flaws: list[Flaw | None]) -> str | None:
    """`newer run X: it ran on ...` (and how many more) for the runs newer than the evidence."""
    if not newer or flaws[0] is None:
        return None
    more = f"; and {len(newer) - 1} more newer run{'s' if len(newer) > 2 else ''}" if len(newer) > 1 else ""
    return f"newer run {newer[0].run_id}: it {flaws[0].text}{more}"


def unpassed_gates(gates: dict[str, str], quarantine: dict[str, dict[str, int]], rule: str) -> list[str]:
    """Each gate of an evidence run that does not count as passed, with why: not `pass`, or passed with flaky items
    kept out (`quarantine`: the counts per gate) where `settings.flaky.promotion` (`rule`) refuses that."""
    problems = []
    for name, words in gates.items():
        if words.split(" ", 1)[0] != "pass":
            problems.append(f"{name} {words}")
            continue
        kept = quarantine.get(name)
        if kept is None or not rests_on_quarantine(words, kept, rule):
            continue
        breaking = f"; {kept['breaking']} of them broke it in that run" if kept["breaking"] else ""
        problems.append(f"{name} {words}{breaking} (settings.flaky.promotion is {rule})")
    return problems


def rests_on_quarantine(words: str, kept: dict[str, int] | None, rule: str) -> bool:
    """True when a gate passed (`words`) with flaky items kept out (`kept`) that `settings.flaky.promotion` refuses."""
    if kept is None or words.split(" ", 1)[0] != "pass" or rule == "allow":
        return False
    return rule != "refuse_if_breaking" or bool(kept["breaking"])
