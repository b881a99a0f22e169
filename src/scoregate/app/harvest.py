"""`scoregate harvest DATASET`: new dataset items proposed from production traces, as a unified diff of the dataset
file (`apply=True` writes it).

Each proposed item has a stable id from its trace (`prod-<trace id>`), its input read through the `production:`
mapping, provenance in `metadata.production` (trace id, time, prompt name@version, the scores the file judges
gave it) and no `expected_output`. Everything taken from a trace is redacted before anything is written or
printed: known secrets, personal data (emails, phone numbers, card numbers passing the Luhn check, IBANs, IP
addresses) and the entry's own `redact:` patterns. A trace is skipped with its reason when it is already an item,
lacks a mapped field, is over MAX_ITEM_CHARS, or its input breaks the dataset's input_schema.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.app.harvest_select import STRATEGIES, Candidate, Strategy, canonical_text, drop_near_duplicates, order
from scoregate.app.traces_ledger import TracesLedger
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.production import ProductionSpec, ProductionWindow
from scoregate.catalog.production_checks import production_prompt
from scoregate.catalog.production_paths import read_fields
from scoregate.catalog.project import Project
from scoregate.errors import ScoregateError
from scoregate.support.redaction import redact_personal_value
from scoregate.tracks.project import load_project

MAX_ITEM_CHARS = 100_000
"""The most characters a harvested item's input may have as JSON: a bigger trace is skipped, not cut."""


@dataclass
class Harvest:
    """What one harvest proposed (and wrote, when applied), and every trace it left out with the reason."""

    dataset: str
    experiment: str
    strategy: str
    path: str
    prompt: str = ""
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    found: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    already: int = 0
    redacted: dict[str, int] = field(default_factory=dict)
    diff: str = ""
    applied: bool = False


def production_entry(project: Project, dataset: str, experiment: str | None) -> tuple[str, ProductionSpec]:
    """The `production:` entry whose experiment fills `dataset` (the one named when several do)."""
    entries = {
        name: spec
        for name, spec in project.config.production.items()
        if project.config.experiments[name].dataset == dataset and experiment in (None, name)
    }
    if len(entries) == 1:
        return next(iter(entries.items()))
    if not entries:
        raise ScoregateError(
            f"no `production:` entry in scoregate.yaml is for dataset {dataset!r}"
            + (f" and experiment {experiment!r}" if experiment else ""),
            where=str(project.config_path),
            hint="add one for an experiment on this dataset (docs/production/index.md)",
        )
    raise ScoregateError(
        f"experiments {', '.join(sorted(entries))} all read production traffic into {dataset!r}",
        hint="say which with --experiment",
    )


def item_id(trace_id: str) -> str:
    """The id of the item harvested from a trace: the same every time."""
    return f"prod-{trace_id}"


def _scores(ledger: TracesLedger) -> dict[str, dict[str, float | str]]:
    """The measured scores `traces score` gave each trace, by trace id and key."""
    found: dict[str, dict[str, float | str]] = {}
    for judged in ledger.judged().values():
        for score in judged.scores:
            if score.value is not None:
                value = float(score.value) if isinstance(score.value, bool | int | float) else str(score.value)
                found.setdefault(judged.trace_id, {})[score.name] = value
    return found


def _candidates(
    project: Project, experiment: str, spec: ProductionSpec, report: Harvest, known: set[str]
) -> list[Candidate]:
    """The traces of the window as candidate items, redacted; the unusable ones skipped with their reason."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.production_fetch import fetch_production
    from scoregate.integrations.langfuse.remote import Remote

    prompt = production_prompt(project, experiment, spec)
    assert prompt is not None  # validate refuses an entry without one
    fetched = fetch_production(Remote(require_settings()), spec, prompt, (report.start, report.end))  # type: ignore[arg-type]
    report.prompt, report.found = fetched.prompt, len(fetched.traces)
    report.skipped += fetched.skipped
    paths = {k: v for k, v in spec.mapping.paths().items() if k != "output"}
    schema = project.datasets[report.dataset].meta.input_schema
    validator = None
    if schema:
        import jsonschema

        validator = jsonschema.Draft202012Validator(schema)
    scores = _scores(TracesLedger(project.root, experiment))
    candidates = []
    for trace in fetched.traces:
        if item_id(trace.trace_id) in known:
            report.already += 1
            continue
        values, missing = read_fields(trace.document, paths)
        if missing:
            report.skipped.append((trace.trace_id, "no " + ", ".join(f"{f} ({paths[f]})" for f in missing)))
            continue
        size = len(canonical_text(values))
        if size > MAX_ITEM_CHARS:
            report.skipped.append(
                (trace.trace_id, f"input of {size:,} characters, over the {MAX_ITEM_CHARS:,} an item may have")
            )
            continue
        cleaned = redact_personal_value(values, patterns=spec.redact, found=report.redacted)
        item_input = {k.removeprefix("input."): v for k, v in cleaned.items() if k.startswith("input.")}
        problem = next(iter(validator.iter_errors(item_input)), None) if validator is not None else None
        if problem is not None:
            where = "/".join(str(p) for p in problem.absolute_path) or "input"
            report.skipped.append(
                (trace.trace_id, f"breaks the dataset's input_schema at {where}: {problem.message[:120]}")
            )
            continue
        candidates.append(
            Candidate(
                trace_id=trace.trace_id,
                timestamp=trace.timestamp,
                prompt=trace.prompt,
                input=item_input,
                metadata={k.removeprefix("metadata."): v for k, v in cleaned.items() if k.startswith("metadata.")},
                scores=scores.get(trace.trace_id, {}),
            )
        )
    return candidates


def _ranges(project: Project, experiment: str) -> dict[str, tuple[float, float]]:
    """Each score key's declared range, from the experiment's evaluator files."""
    found: dict[str, tuple[float, float]] = {}
    for name in project.config.experiments[experiment].evaluators:
        found.update(project.evaluators[name].score_ranges())
    return found


def _item(candidate: Candidate) -> dict[str, Any]:
    provenance = {
        "trace_id": candidate.trace_id,
        "time": candidate.timestamp,
        "prompt": candidate.prompt,
        "scores": candidate.scores,
    }
    return {
        "id": item_id(candidate.trace_id),
        "input": candidate.input,
        "metadata": {**candidate.metadata, "production": provenance},
    }


def harvest_dataset(
    root: Path,
    dataset: str,
    *,
    strategy: Strategy = "uncovered",
    count: int = 10,
    threshold: float | None = None,
    last: str | None = None,
    seed: int = 0,
    experiment: str | None = None,
    apply: bool = False,
    now: dt.datetime | None = None,
) -> Harvest:
    """Propose up to `count` new items of `dataset` from its production traces; return them with the diff of the
    dataset file, which `apply` writes."""
    if strategy not in STRATEGIES:
        raise ScoregateError(f"unknown strategy {strategy!r}", hint=f"use one of: {', '.join(STRATEGIES)}")
    project = load_project(root)
    if dataset not in project.datasets:
        from scoregate.support.suggest import unknown_name

        raise ScoregateError(f"no dataset {dataset!r} in datasets/" + unknown_name(dataset, project.datasets))
    name, spec = production_entry(project, dataset, experiment)
    path = project.datasets[dataset].path
    report = Harvest(dataset, name, strategy, str(path.relative_to(project.root)))
    window = spec.filter.window if last is None else ProductionWindow.from_option(last)
    report.start, report.end = window.bounds(now or dt.datetime.now(dt.UTC))
    old = path.read_text(encoding="utf-8")  # what the proposal is made against; --apply writes only onto it
    existing = [item for _, item in iter_items(path)]
    known = {str(item.id) for item in existing}
    texts = [canonical_text({k: item.input[k] for k in spec.mapping.input if k in item.input}) for item in existing]
    candidates = _candidates(project, name, spec, report, known)
    chosen, report.dropped = drop_near_duplicates(
        order(candidates, strategy, texts, seed),
        texts,
        threshold if threshold is not None else spec.harvest.near_duplicate,
        count,
    )
    report.items = [_item(c) for c in chosen]
    lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in report.items)
    new = old + ("\n" if old and not old.endswith("\n") else "") + lines
    report.diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{report.path}", f"b/{report.path}", n=0
        )  # no context lines: a dataset line is a whole item, often thousands of characters
    )
    if apply and report.items:
        _write_onto(project.root, path, old, new, report.path)
        report.applied = True
    return report


def _write_onto(root: Path, path: Path, old: str, new: str, shown: str) -> None:
    """Replace the dataset file with `new` only if it still holds `old`: another harvest --apply (or an edit) made
    while this one fetched would otherwise be lost, or its items appended twice. Harvests take turns (an OS lock)."""
    import fcntl

    from scoregate.support.files import replace_atomically

    lock = root / ".scoregate" / "harvest.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if path.read_text(encoding="utf-8") != old:
            raise ScoregateError(
                f"{shown} changed while harvest ran (another harvest --apply, or an edit); nothing written",
                hint="run the same command again: it proposes against the dataset as it is now",
            )
        with replace_atomically(path) as handle:
            handle.write(new)
