"""Prompt placeholders that items do not fill, grouped: one typo in a prompt is one error, not one per item."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from scoregate.catalog.project import Project
from scoregate.support.suggest import did_you_mean

FIRST_IDS = 3
"""Items named in a grouped error; the rest are counted."""


@dataclass(frozen=True, slots=True)
class _Item:
    path: Path
    line: int
    item_id: str


@dataclass
class MissingVariables:
    """Items whose input lacks a placeholder of their prompt, by (prompt, variable), across datasets."""

    project: Project
    items: dict[tuple[str, str], dict[_Item, None]] = field(default_factory=dict)
    input_keys: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    in_pipelines: set[tuple[str, str]] = field(default_factory=set)
    """Groups met in a pipeline (fixture mode reads earlier stages' outputs from the items; the message says so)."""

    def add(self, prompt: str, variable: str, at: tuple[Path, int, str], input_keys: set[str], pipeline: bool) -> None:
        """Record that the item at (path, line, id) has no `variable`, which `prompt` uses."""
        self.items.setdefault((prompt, variable), {})[_Item(*at)] = None
        self.input_keys.setdefault((prompt, variable), set()).update(input_keys)
        if pipeline:
            self.in_pipelines.add((prompt, variable))

    def problems(self) -> list[str]:
        """One problem per prompt and variable: where the placeholder is, how many items lack it, the first ones."""
        return [self._problem(prompt, variable) for prompt, variable in self.items]

    def _problem(self, prompt: str, variable: str) -> str:
        items = list(self.items[(prompt, variable)])
        spec = self.project.prompts[prompt]
        suggestion = did_you_mean(variable, self.input_keys[(prompt, variable)] | set(spec.variables))
        first = ", ".join(f"{i.item_id} ({self._relative(i.path)}:{i.line})" for i in items[:FIRST_IDS])
        more = f", and {len(items) - FIRST_IDS} more" if len(items) > FIRST_IDS else ""
        datasets = list(dict.fromkeys(i.path.stem for i in items))
        count = f"{len(items)} item{'s' if len(items) != 1 else ''}" + (
            f" of {len(datasets)} datasets ({', '.join(datasets)})" if len(datasets) > 1 else f" of {datasets[0]}"
        )
        pipeline = "; stage_inputs: fixture reads earlier stages' outputs from the item"
        fix = f"add `{variable}` to the items or give it a default under `variables:` in prompts/{prompt}.yaml"
        return (
            f"{self._placeholder_at(prompt, variable)}: prompt {prompt!r} uses {{{{{variable}}}}} but the item's input "
            f"has no `{variable}`, in {count}: {first}{more}"
            + (f"; {suggestion} If not, {fix}" if suggestion else f"; fix the placeholder, or {fix}")
            + (pipeline if (prompt, variable) in self.in_pipelines else "")
        )

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.project.root)) if path.is_relative_to(self.project.root) else str(path)

    def _placeholder_at(self, prompt: str, variable: str) -> str:
        """`prompts/<name>.yaml:<line>` of the placeholder's first use (the file alone if it is not found)."""
        source = self.project.source("prompt", prompt)
        pattern = re.compile(r"\{\{\s*" + re.escape(variable) + r"\s*\}\}")
        try:
            lines = Path(source).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return source
        return next((f"{source}:{n}" for n, text in enumerate(lines, start=1) if pattern.search(text)), source)
