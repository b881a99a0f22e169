"""`scoregate coverage DATASET`: the share of a window of production traffic that the dataset covers, and the
uncovered traffic grouped into clusters, each with its count and one redacted example.

The traces are those of the experiment on the dataset (`production:`), read through its mapping; a trace without
a mapped field is counted as skipped, never as covered or uncovered. The measure is `coverage_measure`.
"""

from __future__ import annotations

import datetime as dt
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoregate.app.coverage_measure import coverage_of
from scoregate.app.harvest import production_entry
from scoregate.app.harvest_select import canonical_text
from scoregate.catalog.datasets import iter_items
from scoregate.catalog.production import ProductionWindow
from scoregate.catalog.production_checks import production_prompt
from scoregate.catalog.production_paths import read_fields
from scoregate.errors import ScoregateError
from scoregate.support.redaction import redact_personal
from scoregate.tracks.project import load_project

EXAMPLE_CHARS = 200


@dataclass(frozen=True)
class Cluster:
    """Uncovered traces alike: how many, and one of them (redacted, shortened) with its trace id."""

    count: int
    trace_id: str
    example: str


@dataclass
class Coverage:
    """How much of the window's traffic the dataset covers."""

    dataset: str
    experiment: str
    threshold: float
    prompt: str = ""
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    items: int = 0
    traces: int = 0
    covered: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    html_path: str | None = None

    @property
    def share(self) -> float | None:
        """Covered traces over measured traces; None when no trace was measured."""
        return self.covered / self.traces if self.traces else None

    def as_json(self) -> dict[str, Any]:
        """The coverage as JSON (`--json`)."""
        return {
            "dataset": self.dataset,
            "experiment": self.experiment,
            "prompt": self.prompt,
            "window": [self.start.isoformat() if self.start else None, self.end.isoformat() if self.end else None],
            "threshold": self.threshold,
            "items": self.items,
            "traces": self.traces,
            "covered": self.covered,
            "share": self.share,
            "skipped": [{"trace_id": t, "reason": r} for t, r in self.skipped],
            "clusters": [{"count": c.count, "trace_id": c.trace_id, "example": c.example} for c in self.clusters],
        }


def _example(text: str, patterns: list[str]) -> str:
    masked, _ = redact_personal(text, patterns=patterns)
    return masked if len(masked) <= EXAMPLE_CHARS else masked[: EXAMPLE_CHARS - 1] + "…"


def write_html(coverage: Coverage, path: Path) -> None:
    """A self-contained HTML page of the coverage; every text escaped."""
    share = "n/a" if coverage.share is None else f"{coverage.share:.1%}"
    rows = "".join(
        f"<tr><td>{c.count}</td><td><code>{html.escape(c.trace_id)}</code></td><td>{html.escape(c.example)}</td></tr>"
        for c in coverage.clusters
    )
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>coverage "
        f"{html.escape(coverage.dataset)}</title></head><body><h1>Coverage of {html.escape(coverage.dataset)}</h1>"
        f"<p>{coverage.covered} of {coverage.traces} traces covered ({share}) at similarity "
        f"{coverage.threshold:g}, by {coverage.items} items; {len(coverage.skipped)} traces skipped.</p>"
        "<table><tr><th>traces</th><th>example trace</th><th>example input (redacted)</th></tr>"
        f"{rows}</table></body></html>\n"
    )
    from scoregate.support.files import refuse_foreign_file, replace_atomically

    refuse_foreign_file(path, "<!DOCTYPE html>", "an HTML page", "name a new file (--html FILE), or remove this one")
    with replace_atomically(path) as handle:
        handle.write(page)


def measure_coverage(
    root: Path,
    dataset: str,
    *,
    threshold: float | None = None,
    last: str | None = None,
    experiment: str | None = None,
    html_path: Path | None = None,
    now: dt.datetime | None = None,
) -> Coverage:
    """Measure how much of the production traffic of a window the dataset covers; write the HTML page when asked."""
    from scoregate.integrations.langfuse.client import require_settings
    from scoregate.integrations.langfuse.production_fetch import fetch_production
    from scoregate.integrations.langfuse.remote import Remote

    project = load_project(root)
    if dataset not in project.datasets:
        from scoregate.support.suggest import unknown_name

        raise ScoregateError(f"no dataset {dataset!r} in datasets/" + unknown_name(dataset, project.datasets))
    if html_path is not None:  # refused before the traces are fetched, not after
        from scoregate.support.files import check_writable_path, refuse_foreign_file

        check_writable_path(html_path)
        refuse_foreign_file(html_path, "<!DOCTYPE html>", "an HTML page", "name a new file (--html FILE)")
    name, spec = production_entry(project, dataset, experiment)
    limit = threshold if threshold is not None else spec.harvest.near_duplicate
    report = Coverage(dataset, name, limit)
    window = spec.filter.window if last is None else ProductionWindow.from_option(last)
    report.start, report.end = window.bounds(now or dt.datetime.now(dt.UTC))
    prompt = production_prompt(project, name, spec)
    assert prompt is not None  # validate refuses an entry without one
    fetched = fetch_production(Remote(require_settings()), spec, prompt, (report.start, report.end))
    report.prompt, report.skipped = fetched.prompt, list(fetched.skipped)
    mapped = list(spec.mapping.input)  # an item is compared on the fields a trace is: the mapped ones
    items = [
        canonical_text({k: item.input[k] for k in mapped if k in item.input})
        for _, item in iter_items(project.datasets[dataset].path)
    ]
    report.items = len(items)
    paths = {k: v for k, v in spec.mapping.paths().items() if k.startswith("input.")}
    texts, ids = [], []
    for trace in fetched.traces:
        values, missing = read_fields(trace.document, paths)
        if missing:
            report.skipped.append((trace.trace_id, "no " + ", ".join(f"{f} ({paths[f]})" for f in missing)))
            continue
        texts.append(canonical_text({k.removeprefix("input."): v for k, v in values.items()}))
        ids.append(trace.trace_id)
    measured = coverage_of(texts, items, limit)
    report.traces, report.covered = len(texts), measured.covered
    report.clusters = [Cluster(len(m), ids[m[0]], _example(texts[m[0]], spec.redact)) for m in measured.clusters]
    if html_path is not None:
        write_html(report, html_path)
        report.html_path = str(html_path)
    return report
