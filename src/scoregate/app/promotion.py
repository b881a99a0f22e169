"""`scoregate promote`: move a label to a prompt version whose gates passed, and keep the audit trail.

Promotion refuses unless every experiment under `promotion:` in scoregate.yaml has a valid run of the
version whose gates all passed. With Langfuse it then moves the label in Langfuse (`--force --reason`
overrides a refusal; the same alias moves in MLflow's prompt registry when a registered version carries the
tag `langfuse_version=N`). Without Langfuse the version is a prompt file's (`local-<hash>`): the move is the
record alone, it cannot be forced, and it names the baseline the regression gates compare with. Either way
an audit record is appended to `promotions.jsonl` (`scoregate.app.promotion_log`) and added to the evidence
runs' MLflow tags. Rollback undoes the newest promotion not rolled back yet, so repeated rollbacks walk back
through the history.
"""

from __future__ import annotations

import json
from pathlib import Path

from scoregate.app.promotion_evidence import Evidence, gather_evidence, promotion_experiments
from scoregate.app.promotion_log import (
    PROMOTIONS_LOG,
    active_promotions,
    append_record,
    audit_record,
    promotion_history,
    recorded_holder,
)
from scoregate.app.promotion_result import PromotionResult
from scoregate.app.replay_evidence import rule_evidence
from scoregate.app.run.judge_gates import judge_checks
from scoregate.catalog.project import Project
from scoregate.errors import ExitCode, ScoregateError
from scoregate.integrations.langfuse.client import NOT_CONFIGURED, LangfuseSettings, require_settings
from scoregate.integrations.langfuse.prompts_sync import MANAGED_LABEL
from scoregate.integrations.langfuse.remote import Remote, path_part
from scoregate.sinks.mlflow.client import project_client
from scoregate.support.figures import version_name
from scoregate.tracks.project import load_project

__all__ = [
    "AUDIT_TAG", "PROMOTIONS_LOG", "PromotionRefused", "PromotionResult", "active_promotions",
    "promote", "promotion_history", "rollback",
]  # fmt: skip

MLFLOW_VERSION_TAG = "langfuse_version"
"""Tag on an MLflow prompt-registry version naming the Langfuse version it mirrors."""
AUDIT_TAG = "scoregate.promotions"
TAG_LIMIT = 8000


class PromotionRefused(ScoregateError):
    """The gates of the version did not all pass (exit code 3, like a failed gate); `result` holds the evidence."""

    exit_code = ExitCode.GATES_FAILED

    def __init__(self, message: str, *, hint: str | None = None, result: PromotionResult | None = None) -> None:
        super().__init__(message, hint=hint)
        self.result = result


def _check_label(label: str) -> None:
    if not label or label == MANAGED_LABEL:
        raise ScoregateError(f"cannot move the label {label!r}: Langfuse manages `latest` itself")


def _check_force(force: bool, reason: str | None) -> None:
    if force and not (reason and reason.strip()):
        raise ScoregateError("--force needs --reason TEXT: a forced promotion must say why", hint="add --reason '…'")


def promote(
    root: Path,
    prompt: str,
    *,
    version: int | str | None,
    label: str = "production",
    dry_run: bool = False,
    force: bool = False,
    reason: str | None = None,
) -> PromotionResult:
    """Move `label` to `version` of `prompt` if its gates passed (or forced with a reason); audit the move.

    Without Langfuse the version is a prompt file's (`version` None: the file as it is now) and the move is
    recorded in promotions.jsonl alone (never forced).
    """
    _check_label(label)
    _check_force(force, reason)
    project = load_project(root)
    if LangfuseSettings.from_env() is None:
        return _promote_local(project, prompt, version, label, dry_run=dry_run, force=force, reason=reason)
    if not isinstance(version, int):
        raise ScoregateError(
            f"a promotion moves a Langfuse label to a Langfuse version of {prompt!r}, not {version or 'a file'}",
            hint="sync the prompt (`scoregate prompts sync`) and name its version: --version N",
        )
    evidence = gather_evidence(project, prompt, version) + rule_evidence(project, prompt, version)
    remote = Remote(require_settings())
    doing = f"reading prompt {prompt!r} v{version}"
    if remote.find(doing, remote.api.prompts.get, path_part(prompt), version=version) is None:
        raise ScoregateError(f"prompt {prompt!r} has no version {version} in Langfuse")
    result = PromotionResult("promote", prompt, label, version, _holder(remote, prompt, label), evidence, force)
    result.judges = judge_checks(project, promotion_experiments(project, prompt))
    if result.failures and not force:
        _refuse(result)
    if result.previous_version == version:
        result.unchanged = True
        return result
    if dry_run:
        return result
    _apply(project, remote, result, reason)
    return result


def _refuse(result: PromotionResult) -> None:
    listing = "\n".join(f"  - {f}" for f in result.failures)
    judges = "; bring each judge named back in line and check it with `scoregate calibrate --canary`"
    hint = "pass the gates with a full run of each experiment" + (
        judges if any(j.problem for j in result.judges) else ""
    )
    if result.langfuse:
        hint += ", or --force --reason TEXT (audited)"
    else:
        hint += (
            " on the prompt files as they are (`scoregate run EXPERIMENT`); a promotion without "
            "Langfuse is never forced: it names the baseline the regression gates compare with"
        )
    raise PromotionRefused(
        f"refusing to move {result.label!r} to {version_name(result.prompt, result.version)}:\n{listing}",
        hint=hint,
        result=result,
    )


def _local_version(project: Project, prompt: str, version: int | str | None) -> str:
    """The prompt file's version (`local-<hash>`) a promotion without Langfuse moves the label to."""
    if isinstance(version, int):
        raise ScoregateError(
            f"v{version} of {prompt!r} is a Langfuse version, and {NOT_CONFIGURED}",
            hint=f"promote the prompt file as it is: `scoregate promote {prompt}` (no --version), or set the keys",
        )
    if version is not None:
        return version
    from scoregate.app.run.receipts import local_prompt_version
    from scoregate.support.suggest import unknown_name

    if prompt not in project.prompts:
        raise ScoregateError(
            f"no prompt {prompt!r} in {project.root / 'prompts'}" + unknown_name(prompt, project.prompts)
        )
    return local_prompt_version(project.prompts[prompt])


def _promote_local(
    project: Project,
    prompt: str,
    version: int | str | None,
    label: str,
    *,
    dry_run: bool,
    force: bool,
    reason: str | None,
) -> PromotionResult:
    """A promotion without Langfuse: gate-checked like any, recorded in promotions.jsonl (and the evidence runs)."""
    experiments = promotion_experiments(project, prompt)
    if force:
        raise ScoregateError(
            "--force overrides the gates of a Langfuse label; without Langfuse a promotion only records which "
            f"prompt file version holds {label!r}, the baseline of the regression gates, and only once its gates "
            "passed",
            hint=f"see what is missing with `scoregate promote {prompt} --dry-run`, then run "
            + ", ".join(f"`scoregate run {e}`" for e in experiments),
        )
    local = _local_version(project, prompt, version)
    previous = recorded_holder(project.root, prompt, label)
    evidence = gather_evidence(project, prompt, local) + rule_evidence(project, prompt, local)
    result = PromotionResult("promote", prompt, label, local, previous, evidence)
    result.langfuse = False
    result.judges = judge_checks(project, experiments)
    if result.failures:
        _refuse(result)
    if previous == local:
        result.unchanged = True
    elif not dry_run:
        _apply(project, None, result, reason)
    return result


def rollback(
    root: Path,
    prompt: str,
    *,
    label: str = "production",
    dry_run: bool = False,
    force: bool = False,
    reason: str | None = None,
) -> PromotionResult:
    """Move `label` back to the version that held it before the last recorded move; audit the rollback."""
    _check_label(label)
    _check_force(force, reason)
    project = load_project(root)
    history = [r for r in promotion_history(project.root, prompt) if r["label"] == label]
    if not history:
        raise ScoregateError(
            f"no move of {label!r} on prompt {prompt!r} is recorded in {project.root / PROMOTIONS_LOG}",
            hint="rollback undoes a `scoregate promote`; move the label with `scoregate promote` instead",
        )
    active = active_promotions(history)
    if not active:
        raise ScoregateError(
            f"every recorded promotion of {label!r} on {prompt!r} has been rolled back already",
            hint="move the label with `scoregate promote` instead",
        )
    last = active[-1]
    shown = version_name(prompt, last["version"])
    if last["previous_version"] is None:
        raise ScoregateError(
            f"no version held {label!r} before {shown}, so there is nothing to roll back to",
            hint="no command removes a label; promote the version you want instead",
        )
    remote = Remote(require_settings()) if LangfuseSettings.from_env() is not None else None
    current = _holder(remote, prompt, label) if remote is not None else last["version"]
    if current != last["version"] and not force:
        raise ScoregateError(
            f"{label!r} is on v{current} of {prompt!r}, but the recorded history puts it on {shown}: "
            "it was moved outside scoregate",
            hint="check the prompt in Langfuse; --force --reason TEXT rolls back anyway",
        )
    target = last["previous_version"]
    earlier = [r for r in active[:-1] if r["version"] == target]  # the promotion that made the target the holder
    evidence = [Evidence(**e) for e in earlier[-1].get("evidence", [])] if earlier else []
    result = PromotionResult("rollback", prompt, label, target, current, evidence, force)
    result.langfuse = remote is not None
    result.undoes = last["time"]
    result.undone_runs = [str(r) for r in last.get("evidence_runs") or []]
    if not dry_run:
        _apply(project, remote, result, reason, undoes=last["time"])
    return result


def _holder(remote: Remote, prompt: str, label: str) -> int | None:
    found = remote.find(f"reading prompt {prompt!r}", remote.api.prompts.get, path_part(prompt), label=label)
    return int(found.version) if found is not None else None


def _apply(
    project: Project, remote: Remote | None, result: PromotionResult, reason: str | None, *, undoes: str | None = None
) -> None:
    """Move the label (Langfuse, then MLflow's registry; without Langfuse the record is the move), append the audit
    record, tag the evidence runs."""
    if remote is not None:
        remote.call(
            f"moving label {result.label!r} to {result.prompt} v{result.version}",
            remote.api.prompt_version.update,
            path_part(result.prompt),
            result.version,
            new_labels=[result.label],
        )
        result.mlflow_alias = _move_mlflow_alias(project, result)
    result.applied = True
    host = remote.settings.host if remote is not None else None
    result.record = audit_record(project, result, reason, undoes, host)
    append_record(project.root, result.record)
    _tag_evidence(project, result)
    for e in result.evidence if result.action == "promote" else []:
        if e.scoregate_run_id and not e.in_mlflow:
            result.warnings.append(
                f"evidence run {e.scoregate_run_id} is not in MLflow, so promotions.jsonl alone records this "
                f"promotion against it; mirror the run with `scoregate mlflow-sync {e.scoregate_run_id}`"
            )


def _move_mlflow_alias(project: Project, result: PromotionResult) -> int | None:
    """Point the same alias at the registry version mirroring the Langfuse version; None when not mirrored."""
    try:
        client = project_client(project.root)
        versions = list(client.search_prompt_versions(result.prompt))
    except Exception:  # the prompt is not in MLflow's registry: nothing to mirror
        return None
    for registered in versions:
        if str(registered.tags.get(MLFLOW_VERSION_TAG)) == str(result.version):
            try:
                client.set_prompt_alias(result.prompt, result.label, int(registered.version))
            except Exception as exc:
                result.warnings.append(f"MLflow prompt alias {result.label!r} not moved: {exc}")
                return None
            return int(registered.version)
    return None


def _tag_evidence(project: Project, result: PromotionResult) -> None:
    """Append the record to tag `scoregate.promotions` of each evidence run (oldest records dropped past 8000 chars)."""
    runs = [e.mlflow_run_id for e in result.evidence if e.mlflow_run_id]
    if result.action == "rollback":
        runs = list(dict.fromkeys([*result.undone_runs, *runs]))
    if not runs or result.record is None:
        return
    try:
        client = project_client(project.root)
        keys = ("action", "prompt", "label", "version", "previous_version", "forced", "reason", "user", "time")
        short = {k: result.record[k] for k in keys}
        shown = f"v{result.version}" if isinstance(result.version, int) else result.version
        for run_id in runs:
            history = json.loads(client.get_run(run_id).data.tags.get(AUDIT_TAG, "[]"))
            history.append(short)
            while len(json.dumps(history)) > TAG_LIMIT and len(history) > 1:
                history.pop(0)
            client.set_tag(run_id, AUDIT_TAG, json.dumps(history))
            client.set_tag(run_id, f"promotion.{result.label}", f"{result.action} {shown} {short['time']}")
    except Exception as exc:  # the label moved and promotions.jsonl has the record; the tags can be redone
        result.warnings.append(f"MLflow evidence runs not tagged: {exc}")
