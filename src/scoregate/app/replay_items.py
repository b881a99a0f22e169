"""The last N production traces of an experiment read into replay items, redacted before anything touches disk.

Each trace becomes two dataset lines with the same stable id (`prod-<trace id>`): the candidate's (the mapped
input, the logged output kept in `metadata.production.output`) and the logged side's (the same, with the logged
output as `expected_output`, which an `output_from: expected_output` run scores as its output). A trace without a
mapped field cannot be replayed: it is kept as skipped, with its reason, and counts against the candidate.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.app.harvest import MAX_ITEM_CHARS
from scoregate.app.harvest_select import canonical_text
from scoregate.catalog.production import ProductionSpec
from scoregate.catalog.production_checks import production_prompt
from scoregate.catalog.production_paths import read_fields
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.support.redaction import redact_personal_value


@dataclass
class ReplayItems:
    """The replayable items of one fetch, the traces skipped with the reason, and what redaction masked."""

    prompt: str = ""
    candidate: list[dict[str, Any]] = field(default_factory=list)
    logged: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Every trace fetched: the replayed ones and the skipped ones (the denominator)."""
        return len(self.candidate) + len(self.skipped)


def production_spec(project: Project, experiment: str) -> ProductionSpec:
    """The experiment's `production:` entry, or a clear error naming scoregate.yaml."""
    if experiment not in project.config.experiments:
        from scoregate.support.suggest import unknown_name

        raise ScoregateError(
            f"no experiment {experiment!r} in scoregate.yaml" + unknown_name(experiment, project.config.experiments)
        )
    spec = project.config.production.get(experiment)
    if spec is None:
        raise ScoregateError(
            f"experiment {experiment!r} has no `production:` entry in scoregate.yaml",
            where=str(project.config_path),
            hint="add one: which traces are production and how an item is read (docs/production/index.md)",
        )
    return spec


def fetch_replay_items(
    project: Project, experiment: str, spec: ProductionSpec, count: int, now: dt.datetime
) -> ReplayItems:
    """The newest `count` production traces of the experiment's window as replay items, redacted."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.production_fetch import fetch_production
    from scoregate.integrations.langfuse.remote import Remote

    prompt = production_prompt(project, experiment, spec)
    assert prompt is not None  # validate refuses an entry without one
    fetched = fetch_production(Remote(require_settings()), spec, prompt, spec.filter.window.bounds(now), limit=count)
    found = ReplayItems(prompt=fetched.prompt, skipped=list(fetched.skipped))
    paths = spec.mapping.paths()
    for trace in fetched.traces:
        values, missing = read_fields(trace.document, paths)
        if missing:
            found.skipped.append((trace.trace_id, "no " + ", ".join(f"{f} ({paths[f]})" for f in missing)))
            continue
        size = len(canonical_text({k: v for k, v in values.items() if k.startswith("input.")}))
        if size > MAX_ITEM_CHARS:  # the same bound as harvest: skipped, never cut
            found.skipped.append(
                (trace.trace_id, f"input of {size:,} characters, over the {MAX_ITEM_CHARS:,} an item may have")
            )
            continue
        cleaned = redact_personal_value(values, patterns=spec.redact, found=found.redacted)
        item_input = {k.removeprefix("input."): v for k, v in cleaned.items() if k.startswith("input.")}
        metadata = {k.removeprefix("metadata."): v for k, v in cleaned.items() if k.startswith("metadata.")}
        provenance = {"trace_id": trace.trace_id, "time": trace.timestamp, "prompt": trace.prompt}
        item_id = f"prod-{trace.trace_id}"
        found.candidate.append(
            {
                "id": item_id,
                "input": item_input,
                "metadata": {**metadata, "production": {**provenance, "output": cleaned["output"]}},
            }
        )
        found.logged.append(
            {
                "id": item_id,
                "input": item_input,
                "expected_output": cleaned["output"],
                "metadata": {**metadata, "production": provenance},
            }
        )
    return found


def write_items(path: Path, items: list[dict[str, Any]]) -> None:
    """Write items as a JSONL dataset file (already redacted)."""
    from scoregate.support.files import replace_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    with replace_atomically(path) as handle:
        handle.write("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))
