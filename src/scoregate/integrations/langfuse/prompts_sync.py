"""`scoregate prompts sync`: a new Langfuse prompt version only when the prompt really changed.

Langfuse creates a version on every create call, so the local prompt is hashed the way Langfuse stores it
(type, prompt body, config) and compared with the latest version. Labels from the file and `--label` are
added to the version (moving them off older ones); `production` is never set here: only promotion moves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoregate.catalog.models import PromptSpec
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.canonical import canonical_hash
from scoregate.integrations.langfuse.client import require_settings
from scoregate.integrations.langfuse.remote import Remote, path_part
from scoregate.support.git import git_commit

PROTECTED_LABEL = "production"
MANAGED_LABEL = "latest"
VARIABLES_KEY = "scoregate_variables"
"""Config key holding the prompt's default template variables."""

PromptAction = Literal["create", "label", "unchanged"]


@dataclass(frozen=True)
class LangfusePrompt:
    """A prompt as Langfuse stores one version: type, body and config."""

    type: Literal["text", "chat"]
    prompt: str | list[dict[str, Any]]
    config: dict[str, Any]

    @property
    def hash(self) -> str:
        """The hash compared between the local file and Langfuse's latest version."""
        return langfuse_prompt_hash(self.type, self.prompt, self.config)


def langfuse_prompt_hash(type: str, prompt: Any, config: Any) -> str:
    """Return the SHA-256 of a prompt version's (type, prompt, config) in canonical form (numbers by value)."""
    return canonical_hash([type, prompt, config or {}])


def to_langfuse(spec: PromptSpec) -> LangfusePrompt:
    """Return a local prompt as Langfuse stores it: chat → [{role, content}], text → string, config + variables."""
    config = spec.config.model_dump(mode="json", by_alias=True, exclude_none=True)
    if spec.variables:
        config[VARIABLES_KEY] = spec.variables
    if spec.type == "chat":
        return LangfusePrompt("chat", [{"role": m.role, "content": m.content} for m in spec.messages or []], config)
    assert spec.prompt is not None
    return LangfusePrompt("text", spec.prompt, config)


def from_langfuse(version: Any) -> LangfusePrompt:
    """Return a version read from Langfuse (`api.prompts.get`) in the same shape as `to_langfuse`."""
    body: Any = version.prompt
    if version.type == "chat":
        body = [
            {"role": m.role, "content": m.content}
            if getattr(m, "role", None) is not None
            else {"type": "placeholder", "name": getattr(m, "name", None)}
            for m in body
        ]
    return LangfusePrompt(version.type, body, version.config if isinstance(version.config, dict) else {})


@dataclass
class PromptPlan:
    """What the sync does to one prompt: create a version, add labels to the latest, or nothing."""

    name: str
    action: PromptAction
    labels: list[str]
    local_hash: str
    latest_version: int | None
    missing_labels: list[str] = field(default_factory=list)
    version: int | None = None
    """The version holding the local content after applying (known before for `label`/`unchanged`)."""
    body: LangfusePrompt | None = field(default=None, repr=False)


@dataclass
class PromptSyncReport:
    """What `prompts sync` planned and, unless dry-run, applied."""

    host: str
    project: str
    commit_message: str | None
    plans: list[PromptPlan]
    applied: bool
    requests: int = 0
    score_configs: str | None = None
    """What the score-config setup that follows an applied sync did, in one line."""

    def count(self, action: PromptAction) -> int:
        """Return the number of prompts with `action`."""
        return sum(1 for plan in self.plans if plan.action == action)


def select_prompts(project: Project, names: Sequence[str]) -> list[PromptSpec]:
    """Return the named prompts (all when none is named); raise naming the unknown ones."""
    unknown = [n for n in names if n not in project.prompts]
    if unknown:
        known = ", ".join(sorted(project.prompts)) or "none"
        raise ScoregateError(
            f"no prompt {', '.join(map(repr, unknown))} in {project.root / 'prompts'} (found: {known})"
        )
    return [project.prompts[n] for n in (names or sorted(project.prompts))]


def wanted_labels(spec: PromptSpec, extra: Sequence[str]) -> list[str]:
    """Return the file's labels plus `extra`, refusing `production` and `latest`."""
    labels = list(dict.fromkeys([*spec.labels, *extra]))
    if PROTECTED_LABEL in labels:
        raise ScoregateError(
            f"prompt sync never sets the {PROTECTED_LABEL!r} label",
            hint="sync with e.g. --label candidate, then promote the version that passes its gates",
        )
    if MANAGED_LABEL in labels:
        raise ScoregateError(f"the {MANAGED_LABEL!r} label is managed by Langfuse; remove it from prompt {spec.name!r}")
    return labels


def commit_message(project: Project) -> str | None:
    """Return the git commit the prompts come from (`<sha>+dirty` with uncommitted changes), None outside git."""
    git = git_commit(project.root)
    if not git["commit"]:
        return None
    return f"{git['commit']}+dirty" if git["dirty"] else str(git["commit"])


def plan_prompt(spec: PromptSpec, labels: list[str], remote: Remote) -> PromptPlan:
    """Compare one local prompt with its latest Langfuse version and return the plan; reads only."""
    body = to_langfuse(spec)
    latest = remote.find(
        f"reading prompt {spec.name!r}", remote.api.prompts.get, path_part(spec.name), label=MANAGED_LABEL
    )
    if latest is None:
        return PromptPlan(spec.name, "create", labels, body.hash, None, body=body)
    stored = from_langfuse(latest)
    if stored.type != body.type:
        raise ScoregateError(
            f"prompt {spec.name!r} is a {stored.type} prompt in Langfuse and {body.type} here; "
            "Langfuse cannot change a prompt's type",
            where=f"prompts/{spec.name}.yaml",
            hint="keep the type, or give the prompt a new name (a new file) for the new type",
        )
    if stored.hash != body.hash:
        return PromptPlan(spec.name, "create", labels, body.hash, latest.version, body=body)
    missing = [label for label in labels if label not in latest.labels]
    action: PromptAction = "label" if missing else "unchanged"
    return PromptPlan(spec.name, action, labels, body.hash, latest.version, missing, version=latest.version)


def apply_prompt(plan: PromptPlan, remote: Remote, message: str | None) -> None:
    """Write one plan: create the new version (with its labels), or add the missing labels to the latest."""
    from langfuse.api import CreateChatPromptRequest, CreateChatPromptType, CreateTextPromptRequest

    if plan.action == "label":
        remote.call(
            f"labelling prompt {plan.name!r} v{plan.version}",
            remote.api.prompt_version.update,
            path_part(plan.name),
            plan.version,
            new_labels=plan.missing_labels,
        )
    elif plan.action == "create":
        assert plan.body is not None
        request: Any
        if plan.body.type == "chat":
            request = CreateChatPromptRequest(
                name=plan.name, prompt=plan.body.prompt, config=plan.body.config, labels=plan.labels,
                commit_message=message, type=CreateChatPromptType.CHAT,
            )  # fmt: skip
        else:
            request = CreateTextPromptRequest(
                name=plan.name, prompt=plan.body.prompt, config=plan.body.config, labels=plan.labels,
                commit_message=message,
            )  # fmt: skip
        created = remote.call(f"creating a version of prompt {plan.name!r}", remote.api.prompts.create, request=request)
        plan.version = created.version


def sync_prompts(
    project: Project,
    names: Sequence[str] = (),
    *,
    label: Sequence[str] = (),
    dry_run: bool = False,
    remote: Remote | None = None,
) -> PromptSyncReport:
    """Plan every selected prompt against Langfuse, then (unless dry-run) apply; return the report with versions."""
    specs = select_prompts(project, names)
    labels = {spec.name: wanted_labels(spec, label) for spec in specs}
    remote = remote or Remote(require_settings())
    info = remote.project()
    plans = [plan_prompt(spec, labels[spec.name], remote) for spec in specs]
    message = commit_message(project)
    if not dry_run:
        for plan in plans:
            apply_prompt(plan, remote, message)
    return PromptSyncReport(
        host=remote.settings.host,
        project=info.name,
        commit_message=message,
        plans=plans,
        applied=not dry_run,
        requests=remote.requests,
        score_configs=None if dry_run else setup_configs_line(project, remote),
    )


def setup_configs_line(project: Project, remote: Remote) -> str:
    """Run `langfuse setup` (score configs) after a sync; return one line saying what it did or why not."""
    from scoregate.integrations.langfuse.public_api import MissingApi, PublicApi
    from scoregate.integrations.langfuse.score_configs import setup_score_configs

    api = PublicApi(remote.settings)
    try:
        done = setup_score_configs(project, api=api)
    except MissingApi as exc:
        return f"score configs: not set up — {exc.message}"
    finally:
        api.close()
    clash = done.count("conflict")
    conflicts = f", {clash} in conflict (see `scoregate langfuse setup`)" if clash else ""
    return (
        f"score configs: {done.count('create')} created, {done.count('update')} updated, "
        f"{done.count('unchanged')} unchanged{conflicts}"
    )
