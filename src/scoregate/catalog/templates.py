"""`{{variable}}` templates as Langfuse writes them: find the variables, render with values."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from scoregate.catalog.models import PromptSpec

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
MAX_INSTRUCTION_VALUE = 200
"""Characters of filled-in values above which a template line holds the item's data rather than an instruction."""


def variables_in(text: str) -> list[str]:
    """Return the distinct placeholder names in `text`, in order of first use."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(text)))


def malformed_placeholders(text: str) -> list[str]:
    """Return each `{{` or `}}` that is not part of a well-formed `{{name}}` (e.g. `{{title}`), as a snippet."""
    spans = [m.span() for m in _PLACEHOLDER.finditer(text)]
    starts, ends = {a for a, _ in spans}, {b for _, b in spans}
    found = []
    for match in re.finditer(r"\{\{|\}\}", text):
        at = match.start()
        inside = any(a < at < b - 2 for a, b in spans)
        if inside or (match.group() == "{{" and at in starts) or (match.group() == "}}" and match.end() in ends):
            continue
        snippet = text[max(0, at - 10) : at + 20].replace("\n", " ")
        found.append(snippet.strip())
    return found


def prompt_texts(prompt: PromptSpec) -> list[str]:
    """Return every template text of a prompt (the text, or each message's content)."""
    return [prompt.prompt] if prompt.type == "text" and prompt.prompt else [m.content for m in prompt.messages or []]


def prompt_variables(prompt: PromptSpec) -> list[str]:
    """Return every variable a prompt's template uses."""
    texts = [prompt.prompt] if prompt.type == "text" and prompt.prompt else [m.content for m in prompt.messages or []]
    return list(dict.fromkeys(v for t in texts for v in variables_in(t)))


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render(text: str, values: Mapping[str, Any]) -> str:
    """Substitute every `{{name}}` with its value; a missing name raises KeyError."""
    return _PLACEHOLDER.sub(lambda m: _as_text(values[m.group(1)]), text)


def render_messages(prompt: PromptSpec, values: Mapping[str, Any]) -> tuple[dict[str, str], ...]:
    """Return the chat messages of a prompt with its variables filled in (a text prompt is one user turn)."""
    merged = {**prompt.variables, **values}
    if prompt.type == "text":
        return ({"role": "user", "content": render(prompt.prompt or "", merged)},)
    return tuple({"role": m.role, "content": render(m.content, merged)} for m in prompt.messages or [])


def instruction_lines(prompt: PromptSpec, values: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the prompt's own lines for one item: each template line, its short values filled in.

    A line whose value spans lines or is long (a transcript: the item's data, not an instruction) is left out,
    as is a line naming a value the item lacks.
    """
    merged = {**prompt.variables, **values}
    lines = []
    for text in prompt_texts(prompt):
        for line in text.splitlines():
            try:
                rendered = render(line, merged)
            except KeyError:
                continue
            if "\n" not in rendered and len(rendered) <= len(line) + MAX_INSTRUCTION_VALUE:
                lines.append(rendered)
    return tuple(lines)
