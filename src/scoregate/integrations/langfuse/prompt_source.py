"""Prompts for a run taken from Langfuse by label or version, as the same PromptSpec a local file gives.

Reads go through the uncached REST API (`api.prompts.get`), so a run never gets a stale cached prompt
and never a fallback: a prompt Langfuse does not have is an error, not a silent substitute. The run's
receipts record the Langfuse version number (e.g. "3"), which is what promotion looks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from scoregate.catalog.models import PromptConfig, PromptSpec
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import require_settings
from scoregate.integrations.langfuse.prompts_sync import MANAGED_LABEL, PROTECTED_LABEL, VARIABLES_KEY
from scoregate.integrations.langfuse.remote import Remote, path_part

DEFAULT_LABELS = ("candidate", PROTECTED_LABEL)
"""Without --prompt-label or --prompt-version: the `candidate` version if there is one, else `production`."""
CONFIG_KEYS = {field.alias or name for name, field in PromptConfig.model_fields.items()}
LOCAL_HINT = "or run the local prompt files with `--prompt-source local` (the receipts then record source `file`)"


@dataclass(frozen=True)
class ResolvedPrompt:
    """A prompt version fetched from Langfuse: the spec to run, and the version the receipts record."""

    spec: PromptSpec
    version: str
    langfuse_version: int
    labels: tuple[str, ...]
    chosen_by: str
    ignored_config: tuple[str, ...] = ()


def resolve_prompts(
    project: Project, names: Sequence[str], *, label: str | None, version: int | None, source: str = "langfuse"
) -> dict[str, ResolvedPrompt]:
    """Fetch each named prompt from Langfuse by `label` or `version` (default: candidate, else production).

    When Langfuse fails and the source was only the default (`auto`), the error says how to run the local files.
    """
    if label is not None and version is not None:
        raise ScoregateError("choose the prompt by --prompt-label or by --prompt-version, not both")
    if version is not None and len(names) > 1:
        raise ScoregateError(
            f"--prompt-version {version} is ambiguous: this experiment routes between {len(names)} prompts "
            f"({', '.join(names)}), each with its own version numbers",
            hint="use --prompt-label to pick one labelled version of each",
        )
    remote = Remote(require_settings())
    try:
        return {name: _resolve(remote, project, name, label, version) for name in names}
    except ScoregateError as exc:
        if source == "auto" and label is None and version is None and LOCAL_HINT not in (exc.hint or ""):
            exc.hint = f"{exc.hint}; {LOCAL_HINT}" if exc.hint else LOCAL_HINT
        raise


def _resolve(remote: Remote, project: Project, name: str, label: str | None, version: int | None) -> ResolvedPrompt:
    def fetch(**choice: Any) -> Any:
        return remote.find(f"reading prompt {name!r}", remote.api.prompts.get, path_part(name), **choice)

    if version is not None:
        found, chosen_by = fetch(version=version), f"version {version}"
        missing = f"prompt {name!r} has no version {version} in Langfuse"
    elif label is not None:
        found, chosen_by = fetch(label=label), f"label {label!r}"
        missing = f"no version of prompt {name!r} carries the label {label!r} in Langfuse"
    else:
        found, chosen_by = None, ""
        for default in DEFAULT_LABELS:
            found, chosen_by = fetch(label=default), f"label {default!r}"
            if found is not None:
                break
        missing = f"prompt {name!r} has neither a 'candidate' nor a 'production' version in Langfuse"
    if found is None:
        raise ScoregateError(missing, hint=_missing_hint(label, version))
    spec, ignored = prompt_spec_from_langfuse(found, local=project.prompts.get(name))
    labels = tuple(found.labels or [])
    return ResolvedPrompt(spec, str(found.version), int(found.version), labels, chosen_by, ignored)


def _missing_hint(label: str | None, version: int | None) -> str:
    """What to do about a prompt version Langfuse lacks, naming only the option the user gave (if any)."""
    upload = f"upload it with `scoregate prompts sync --label {label or 'candidate'}`"
    given = f"--prompt-version {version}" if version is not None else f"--prompt-label {label}" if label else None
    if given is None:
        return f"{upload}, {LOCAL_HINT}"
    return f"{upload}, or run the local prompt files: drop {given} and add `--prompt-source local`"


def prompt_spec_from_langfuse(found: Any, *, local: PromptSpec | None = None) -> tuple[PromptSpec, tuple[str, ...]]:
    """Convert a Langfuse prompt version back into a PromptSpec; also return the config keys it does not use."""
    where = f"Langfuse prompt {found.name!r} v{found.version}"
    config = found.config if isinstance(found.config, dict) else {}
    body: dict[str, Any] = {"name": found.name, "type": found.type}
    if found.type == "chat":
        messages = []
        for message in found.prompt:
            if getattr(message, "role", None) is None:
                raise ScoregateError(
                    "the prompt holds a message placeholder, which scoregate templates cannot fill",
                    where=where,
                    hint="replace the placeholder by a message with {{variables}}",
                )
            messages.append({"role": message.role, "content": message.content})
        body["messages"] = messages
    else:
        body["prompt"] = found.prompt
    body["config"] = {k: v for k, v in config.items() if k in CONFIG_KEYS}
    body["variables"] = config.get(VARIABLES_KEY) or {}
    body["labels"] = [lb for lb in found.labels or [] if lb not in (PROTECTED_LABEL, MANAGED_LABEL)]
    body["description"] = local.description if local is not None else ""
    try:
        spec = PromptSpec.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ScoregateError(f"not a prompt scoregate can run: {problems}", where=where) from None
    ignored = tuple(sorted(k for k in config if k not in CONFIG_KEYS and k != VARIABLES_KEY))
    return spec, ignored
