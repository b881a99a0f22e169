"""Whether a run takes its prompts from Langfuse or the local files; cheap to import (no SDK, no HTTP client)."""

from __future__ import annotations

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import LangfuseSettings, require_settings

LANGFUSE_SOURCE = "langfuse"
"""The prompt source that reads Langfuse (`--prompt-source langfuse`; a prompt receipt's `source` when it did)."""
FILE_SOURCE = "file"
"""A prompt receipt's `source` when the prompt was read from its local file."""
PROMPT_SOURCES = ("auto", LANGFUSE_SOURCE, "local")


def choose_prompt_source(
    source: str, *, asked: str | None, resumed: bool, local_by: str = "--prompt-source local"
) -> bool:
    """Decide whether a run reads its prompts from Langfuse (True) or the local files (False); raise on conflicts.

    `auto` reads Langfuse when it is configured; `local` (also what `run --no-langfuse` means) never touches
    it; a Langfuse version asked for (--prompt-label/--prompt-version, or a resumed run made on one) cannot
    come from the local files, and Langfuse being unreachable is an error, never a silent fallback. `asked` is the
    option that asked for a Langfuse version (`--prompt-label staging`), `local_by` the one that chose the local
    files: an error names only the options the user gave.
    """
    if source not in PROMPT_SOURCES:
        raise ScoregateError(f"--prompt-source must be one of {', '.join(PROMPT_SOURCES)}, not {source!r}")
    if source == "local":
        if asked or resumed:
            why = f"{asked} names a Langfuse version" if asked else "the run used Langfuse"
            raise ScoregateError(
                f"{why}, but this run takes its prompts from the local files ({local_by})",
                hint=f"drop {asked} or {local_by}" if asked else f"resume it without {local_by}",
            )
        return False
    configured = LangfuseSettings.from_env() is not None
    if source == "langfuse" and not configured:
        require_settings()
    return configured or asked is not None or resumed
