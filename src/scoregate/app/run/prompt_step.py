"""Where a run's prompts come from: Langfuse's served versions (never a silent fallback) or the local files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoregate.app.run.option_groups import PROMPT_SERVER
from scoregate.app.run.run_options import RunOptions
from scoregate.catalog.project import Project
from scoregate.catalog.routing import route_prompts

if TYPE_CHECKING:
    from scoregate.store.record import Receipts

__all__ = ["prompt_source_line", "use_langfuse_prompts"]


def use_langfuse_prompts(
    project: Project, experiment: str, options: RunOptions, *, resumed: Receipts | None
) -> dict[str, str]:
    """With Langfuse as the prompt source, swap in the prompts Langfuse serves; never fall back silently.

    Returns prompt name → version for the receipts; empty when the local files are used.
    """
    from scoregate.integrations.langfuse.prompt_choice import choose_prompt_source

    asked = {"--prompt-label": options.prompts.label, "--prompt-version": options.prompts.version}
    given = next((f"{flag} {value}" for flag, value in asked.items() if value is not None), None)
    local_by = "--no-langfuse" if PROMPT_SERVER in options.mirrors.off else "--prompt-source local"
    spec = project.config.experiments.get(experiment)
    versions = {n: p.langfuse_version for n, p in (resumed.prompts if resumed else {}).items()}
    from_langfuse = choose_prompt_source(
        options.prompts.source, asked=given, resumed=any(versions.values()), local_by=local_by
    )
    if not from_langfuse or spec is None:
        return {}
    from scoregate.integrations.langfuse.prompt_source import resolve_prompts

    names = route_prompts(spec.prompt)
    if resumed is not None:
        if not any(versions.values()):
            return {}
        resolved = {}
        for name in names:
            resolved.update(resolve_prompts(project, [name], label=None, version=versions.get(name)))
    else:
        resolved = resolve_prompts(
            project, names, label=options.prompts.label, version=options.prompts.version, source=options.prompts.source
        )
    for name, found in resolved.items():
        project.prompts[name] = found.spec
    return {name: found.version for name, found in resolved.items()}


def prompt_source_line(versions: dict[str, str], options: RunOptions) -> str:
    """Say where the run's prompts come from (the receipts record it per prompt as `source`)."""
    langfuse = {n: v for n, v in versions.items() if v.isdigit()}
    if langfuse:
        return "prompts: from Langfuse " + ", ".join(f"{n} v{v}" for n, v in langfuse.items())
    return f"prompts: local files (prompt source {options.prompts.source})"
