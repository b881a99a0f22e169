"""`scoregate promote`: move a Langfuse label to a prompt version whose gates passed, and keep the audit trail.

Promotion refuses unless every experiment under `promotion:` in scoregate.yaml has a valid run of the
version whose gates all passed (or `--force` with a reason). It then moves the label in Langfuse (and
the same alias in MLflow's prompt registry when a registered version carries the tag
`langfuse_version=N`), appends an audit record to `promotions.jsonl` in the project root — a file to
commit: Langfuse keeps no label history — and adds the record to the evidence runs' MLflow tags.
Rollback undoes the newest promotion not rolled back yet, so repeated rollbacks walk back through the history.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from scoregate.app.judge_gates import JudgeCheck, judge_checks
from scoregate.app.promotion_evidence import (
    Evidence,
    experiment_gates_hash,
    gather_evidence,
    promotion_experiments,
    version_name,
)
from scoregate.catalog.project import Project
from scoregate.errors import ExitCode, ScoregateError
from scoregate.integrations.langfuse.client import NOT_CONFIGURED, LangfuseSettings, require_settings
from scoregate.integrations.langfuse.prompts_sync import MANAGED_LABEL
from scoregate.integrations.langfuse.remote import Remote, path_part
from scoregate.sinks.mlflow.client import project_client
from scoregate.tracks.project import load_project

PROMOTIONS_LOG = "promotions.jsonl"
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


@dataclass
class PromotionResult:
    """What a promote or rollback found and did."""

    action: Literal["promote", "rollback"]
    prompt: str
    label: str
    version: int | str
    """A Langfuse version, or a prompt file's `local-<hash>` (a dry run without Langfuse)."""
    previous_version: int | None
    evidence: list[Evidence] = field(default_factory=list)
    forced: bool = False
    applied: bool = False
    unchanged: bool = False
    mlflow_alias: int | None = None
    record: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    undoes: str | None = None
    """For a rollback: the time of the promotion it undoes."""
    undone_runs: list[str] = field(default_factory=list)
    """For a rollback: the MLflow evidence runs of the promotion it undoes (tagged with the rollback)."""
    langfuse: bool = True
    """False for a dry run without Langfuse: the evidence is known, the label's holder is not."""
    judges: list[JudgeCheck] = field(default_factory=list)
    """The pinned judges deciding the gates: calibrated and undrifted, or why not (`canaries:`)."""

    @property
    def failures(self) -> list[str]:
        """Each experiment whose gates did not pass, and each deciding judge that drifted, with why."""
        gates = [f"{e.experiment}: {e.problem}" for e in self.evidence if not e.passed]
        return gates + [f"{', '.join(j.gates)}: {j.problem}" for j in self.judges if j.problem]


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

    A dry run without Langfuse shows the evidence alone (`version` None: the prompt file's own version).
    """
    _check_label(label)
    _check_force(force, reason)
    project = load_project(root)
    if dry_run and LangfuseSettings.from_env() is None:
        return _evidence_only(project, prompt, version, label)
    if not isinstance(version, int):
        raise ScoregateError(
            f"a promotion moves a Langfuse label to a Langfuse version of {prompt!r}, not {version or 'a file'}",
            hint="sync the prompt (`scoregate prompts sync`) and name its version: --version N",
        )
    evidence = gather_evidence(project, prompt, version)
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
    raise PromotionRefused(
        f"refusing to move {result.label!r} to {version_name(result.prompt, result.version)}:\n{listing}",
        hint="pass the gates with a full run of each experiment"
        + (judges if any(j.problem for j in result.judges) else "")
        + ", or --force --reason TEXT (audited)",
        result=result,
    )


def _evidence_only(project: Project, prompt: str, version: int | str | None, label: str) -> PromotionResult:
    """A dry run without Langfuse: the gate evidence of `version` (default: the prompt file's), read from MLflow."""
    if version is None:
        from scoregate.app.receipts import local_prompt_version
        from scoregate.support.suggest import unknown_name

        if prompt not in project.prompts:
            raise ScoregateError(
                f"no prompt {prompt!r} in {project.root / 'prompts'}" + unknown_name(prompt, project.prompts)
            )
        version = local_prompt_version(project.prompts[prompt])
    result = PromotionResult("promote", prompt, label, version, None, gather_evidence(project, prompt, version))
    result.langfuse = False
    result.judges = judge_checks(project, promotion_experiments(project, prompt))
    if result.failures:
        _refuse(result)
    return result


NO_LANGFUSE = NOT_CONFIGURED + ": the evidence is read from MLflow; which version holds a label, and moving it, need it"


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
    if last["previous_version"] is None:
        raise ScoregateError(
            f"no version held {label!r} before v{last['version']} of {prompt!r}, so there is nothing to roll back to",
            hint="Langfuse's API cannot remove a label; promote the version you want instead",
        )
    remote = Remote(require_settings())
    current = _holder(remote, prompt, label)
    if current != last["version"] and not force:
        raise ScoregateError(
            f"{label!r} is on v{current} of {prompt!r}, but the recorded history puts it on v{last['version']}: "
            "it was moved outside scoregate",
            hint="check the prompt in Langfuse; --force --reason TEXT rolls back anyway",
        )
    target = last["previous_version"]
    earlier = [r for r in active[:-1] if r["version"] == target]  # the promotion that made the target the holder
    evidence = [Evidence(**e) for e in earlier[-1].get("evidence", [])] if earlier else []
    result = PromotionResult("rollback", prompt, label, target, current, evidence, force)
    result.undoes = last["time"]
    result.undone_runs = [str(r) for r in last.get("evidence_runs") or []]
    if not dry_run:
        _apply(project, remote, result, reason, undoes=last["time"])
    return result


def active_promotions(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the promotions of one label not undone by a later rollback, oldest first: the rollback stack.

    Each rollback undoes the newest promotion still active (the one named by its `undoes`), so successive
    rollbacks walk back through the history instead of flipping between two versions.
    """
    active: list[dict[str, Any]] = []
    for record in history:
        if record.get("action") == "rollback":
            undone = [r for r in active if r["time"] == record.get("undoes")] or active[-1:]
            for r in undone:
                active.remove(r)
        else:
            active.append(record)
    return active


def promotion_history(root: Path, prompt: str | None = None) -> list[dict[str, Any]]:
    """Return the audit records of `promotions.jsonl`, oldest first (of one prompt when named)."""
    path = root / PROMOTIONS_LOG
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError as exc:
            raise ScoregateError(f"not a JSON line ({exc})", where=f"{path}:{number}") from None
    return [r for r in records if prompt is None or r.get("prompt") == prompt]


def _holder(remote: Remote, prompt: str, label: str) -> int | None:
    found = remote.find(f"reading prompt {prompt!r}", remote.api.prompts.get, path_part(prompt), label=label)
    return int(found.version) if found is not None else None


def _apply(
    project: Project, remote: Remote, result: PromotionResult, reason: str | None, *, undoes: str | None = None
) -> None:
    """Move the label (Langfuse, then MLflow's registry), append the audit record, tag the evidence runs."""
    remote.call(
        f"moving label {result.label!r} to {result.prompt} v{result.version}",
        remote.api.prompt_version.update,
        path_part(result.prompt),
        result.version,
        new_labels=[result.label],
    )
    result.applied = True
    result.mlflow_alias = _move_mlflow_alias(project, result)
    result.record = _audit_record(project, remote, result, reason, undoes)
    with (project.root / PROMOTIONS_LOG).open("a", encoding="utf-8") as log:
        log.write(json.dumps(result.record, ensure_ascii=False, sort_keys=True) + "\n")
    _tag_evidence(project, result)


def _audit_record(
    project: Project, remote: Remote, result: PromotionResult, reason: str | None, undoes: str | None
) -> dict[str, Any]:
    config = project.config_path
    experiments, known = {e.experiment for e in result.evidence}, set(project.config.experiments)
    return {
        "action": result.action,
        "prompt": result.prompt,
        "label": result.label,
        "version": result.version,
        "previous_version": result.previous_version,
        "evidence": [e.to_dict() for e in result.evidence],
        "evidence_runs": [e.mlflow_run_id for e in result.evidence if e.mlflow_run_id],
        "gate_file": str(config.name),
        "gate_file_hash": hashlib.sha256(config.read_bytes()).hexdigest() if config.is_file() else None,
        "gates_hash": {x: experiment_gates_hash(project, x) for x in sorted(experiments & known)},
        "forced": result.forced,
        "failures": result.failures,
        "judges": [j.to_dict() for j in result.judges],
        "reason": reason,
        "undoes": undoes,
        "user": os.environ.get("SCOREGATE_USER") or getpass.getuser(),
        "time": datetime.now(UTC).isoformat(),
        "langfuse_host": remote.settings.host,
        "mlflow_alias_version": result.mlflow_alias,
    }


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
        for run_id in runs:
            history = json.loads(client.get_run(run_id).data.tags.get(AUDIT_TAG, "[]"))
            history.append(short)
            while len(json.dumps(history)) > TAG_LIMIT and len(history) > 1:
                history.pop(0)
            client.set_tag(run_id, AUDIT_TAG, json.dumps(history))
            client.set_tag(run_id, f"promotion.{result.label}", f"{result.action} v{result.version} {short['time']}")
    except Exception as exc:  # the label moved and promotions.jsonl has the record; the tags can be redone
        result.warnings.append(f"MLflow evidence runs not tagged: {exc}")
