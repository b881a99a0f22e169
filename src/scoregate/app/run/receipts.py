"""Receipts: everything needed to say exactly what a run ran (versions, hashes, commit, model, endpoint)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate import __version__
from scoregate.catalog.models import ModelSpec, PromptSpec
from scoregate.catalog.plan import ExperimentPlan, models_used
from scoregate.catalog.project import Project
from scoregate.integrations.langfuse.prompt_choice import FILE_SOURCE, LANGFUSE_SOURCE
from scoregate.support.git import git_commit

if TYPE_CHECKING:
    from scoregate.store.record import Receipts


def sha256_text(text: str) -> str:
    """Return the hex SHA-256 of a string."""
    return hashlib.sha256(text.encode()).hexdigest()


def prompt_fingerprint(prompt: PromptSpec) -> str:
    """Return the hash of what makes a prompt version: type, template and config (not labels)."""
    body = prompt.prompt if prompt.type == "text" else [m.model_dump() for m in prompt.messages or []]
    config = prompt.config.model_dump(mode="json", by_alias=True, exclude_none=True)
    return sha256_text(json.dumps([prompt.type, body, config, prompt.variables], sort_keys=True))


def local_prompt_version(prompt: PromptSpec) -> str:
    """Return the version label of a prompt read from a file: `local-<first 8 hex of its fingerprint>`."""
    return "local-" + prompt_fingerprint(prompt)[:8]


def model_receipt(name: str, spec: ModelSpec, endpoint: str) -> dict[str, Any]:
    """Describe a model without any secret: name, provider, model id, endpoint, sampling defaults."""
    return {
        "name": name,
        "provider": spec.provider,
        "model": spec.model,
        "endpoint": endpoint,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
    }


# Fields that change how a run goes, not what it measures: editing them never blocks a resume.
_OPERATIONAL = {
    "settings": {"model", "judge_model", "concurrency", "shard_budget"},  # a resume takes its models from the receipts
    "experiment": {"model", "judge_model", "concurrency"},
    "model": {"max_connections", "timeout_s", "max_retries"},
}


def config_parts(project: Project, plan: ExperimentPlan) -> dict[str, str]:
    """Hash each part of scoregate.yaml a run of `plan` reads, by its path (`models.gpt-4o-mini`, `gates.x`).

    Parts the run does not read (other models, experiments, gates) are left out, so adding one never blocks
    `--resume`; neither do fields that do not change what is measured (concurrency, timeouts, retries).
    """
    config = project.config
    parts: dict[str, Any] = {
        "settings": config.settings.model_dump(mode="json", exclude=_OPERATIONAL["settings"]),
        f"experiments.{plan.name}": plan.spec.model_dump(mode="json", exclude=_OPERATIONAL["experiment"]),
    }
    for name in models_used(plan):
        parts[f"models.{name}"] = config.models[name].model_dump(mode="json", exclude=_OPERATIONAL["model"])
    for name, composite in plan.composites.items():
        parts[f"composites.{name}"] = composite.model_dump(mode="json")
    for gate in plan.gates:
        parts[f"gates.{gate.name}"] = gate.model_dump(mode="json")
    return {path: sha256_text(json.dumps(value, sort_keys=True, default=str)) for path, value in parts.items()}


def resume_conflicts(before: Receipts, now: Receipts) -> list[str]:
    """Return what changed between a run's receipts and the setup a resume would use, each part by name."""
    out = []
    if _content_hash(before) != _content_hash(now):
        out.append("the dataset changed")
    if before.config_parts is not None:
        old, new = before.config_parts, now.config_parts or {}
        changed = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
        if changed:
            out.append(f"scoregate.yaml changed where this run reads it ({', '.join(changed)})")
    elif before.config_hash != now.config_hash:  # a run from before receipts had parts
        out.append("scoregate.yaml changed (this run's receipts hash the whole file)")
    parts = {
        "prompts": (
            {n: p.to_dict() for n, p in before.prompts.items()},
            {n: p.to_dict() for n, p in now.prompts.items()},
        ),
        "evaluators": (_evaluators(before), _evaluators(now)),
    }
    for what, (old_part, new_part) in parts.items():
        changed = sorted(n for n in old_part.keys() | new_part.keys() if old_part.get(n) != new_part.get(n))
        if changed:
            out.append(f"the {what} changed ({', '.join(changed)})")
    return out


def _prompts(receipts: Receipts) -> dict[str, dict[str, Any]]:
    return {name: prompt.to_dict() for name, prompt in receipts.prompts.items()}


def _evaluators(receipts: Receipts) -> dict[str, dict[str, Any]]:
    return {name: evaluator.to_dict() for name, evaluator in receipts.evaluators.items()}


def _content_hash(receipts: Receipts) -> str | None:
    return receipts.dataset.content_hash if receipts.dataset else None


def _file_hash(path: Path | None) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path and path.is_file() else None


def build_receipts(
    project: Project,
    plan: ExperimentPlan,
    *,
    prompt_versions: dict[str, str],
    endpoints: dict[str, str],
) -> dict[str, Any]:
    """Return the manifest's receipts for a run of `plan`."""
    return {
        "tool_version": __version__,
        "git": git_commit(project.root),
        "config_hash": _file_hash(project.config_path),
        "config_parts": config_parts(project, plan),
        "project": project.config.project,
        "experiment": plan.name,
        "dataset": {
            "name": plan.dataset.name,
            "content_hash": plan.dataset_scan.content_hash,
            "items": plan.dataset_scan.count,
        },
        "prompts": {
            name: {
                "version": prompt_versions[name],
                "source": LANGFUSE_SOURCE if prompt_versions[name].isdigit() else FILE_SOURCE,
                "langfuse_version": int(prompt_versions[name]) if prompt_versions[name].isdigit() else None,
                "fingerprint": prompt_fingerprint(spec),
                "labels": spec.labels,
                "temperature": spec.config.temperature,
                "max_tokens": spec.config.max_tokens,
            }
            for name, spec in plan.prompts.items()
        },
        "output_from": plan.spec.output_from,
        "model": model_receipt(plan.model_name, plan.model, endpoints[plan.model_name]),
        "judge_model": model_receipt(
            plan.judge_model_name,
            project.config.models[plan.judge_model_name],
            endpoints.get(plan.judge_model_name, ""),
        ),
        "evaluators": {
            name: {
                "kind": spec.kind,
                "version": spec.version,
                "file_hash": _file_hash(project.sources.get(f"evaluator:{name}")),
            }
            for name, spec in plan.evaluators.items()
        },
        "composites": {name: spec.weights for name, spec in plan.composites.items()},
        "gates": [g.model_dump(mode="json") for g in plan.gates],
        "gates_hash": sha256_text(json.dumps([g.model_dump(mode="json") for g in plan.gates], sort_keys=True)),
    }
