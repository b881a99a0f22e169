"""Write reports to disk: a run's own `runs/<id>/report.html`, or any set of runs to a chosen file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoregate.errors import ScoregateError
from scoregate.report.data import ReportOptions, build_report
from scoregate.report.page import render_page_parts
from scoregate.store.run_store import RunStore
from scoregate.support.files import refuse_foreign_file, replace_atomically

if TYPE_CHECKING:
    from scoregate.catalog.evaluators import EvaluatorSpec

REPORT_FILE = "report.html"


def write_report(stores: Sequence[RunStore], path: Path, options: ReportOptions | None = None) -> Path:
    """Render the report of `stores` (the first is the baseline) to `path`, atomically; return the path."""
    refuse_foreign_file(path, "<!DOCTYPE html>", "an HTML page", "name a new file (-o FILE), or remove this one first")
    report = build_report(stores, options)
    try:
        with replace_atomically(path) as out:
            out.writelines(render_page_parts(report))
    except ScoregateError as exc:
        raise ScoregateError(
            exc.message.replace("cannot write", "cannot write the report", 1), where=str(path),
            hint="choose a writable file path (-o FILE)",
        ) from None  # fmt: skip
    return path


def write_run_report(store: RunStore, options: ReportOptions | None = None) -> Path:
    """Write one run's report to `runs/<id>/report.html`; return its path."""
    return write_report([store], store.directory / REPORT_FILE, options)


def default_report_path(runs_dir: Path, run_ids: Sequence[str]) -> Path:
    """Where `scoregate report` writes by default, always inside a run's own directory.

    One run: `runs/<id>/report.html`; two: `runs/<B>/compare-<A>.html` (beside the candidate); more:
    `runs/<first>/rank-<hash of the ids>.html`.
    """
    if len(run_ids) == 1:
        return runs_dir / run_ids[0] / REPORT_FILE
    if len(run_ids) == 2:
        return runs_dir / run_ids[1] / f"compare-{run_ids[0]}.html"
    digest = hashlib.sha256("\n".join(run_ids).encode()).hexdigest()[:10]
    return runs_dir / run_ids[0] / f"rank-{digest}.html"


def report_runs(
    root: Path,
    run_ids: Sequence[str],
    *,
    output: Path | None = None,
    metric: str | None = None,
    corrected: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write the report of stored runs of the project at `root` (the `scoregate report` entry point); return its path.

    The statistics settings are the project's when its scoregate.yaml loads, else the defaults. `corrected` (score →
    its corrected paired difference, from `compare --estimate corrected`) is shown beside the comparison's raw Δ.
    """
    runs_dir = root / "runs"
    stores = [RunStore.open(runs_dir, run_id) for run_id in run_ids]
    path = output or default_report_path(runs_dir, run_ids)
    options = replace(project_report_options(root, metric=metric), corrected=corrected)
    return write_report(stores, path, options)


def project_report_options(root: Path, *, metric: str | None = None) -> ReportOptions:
    """The report's statistics settings from the project's scoregate.yaml (defaults when it does not load)."""
    from scoregate.catalog.directions import project_directions
    from scoregate.errors import ScoregateError
    from scoregate.tracks.project import load_project

    try:
        project = load_project(root)
    except ScoregateError:
        return ReportOptions(metric=metric)
    settings = project.config.settings
    return ReportOptions(
        confidence=settings.confidence_level,
        resamples=settings.bootstrap_resamples,
        seed=settings.seed,
        metric=metric,
        directions=project_directions(project),
        scales=declared_scales(project.evaluators.values()),
        min_coverage=settings.min_coverage,
    )


def declared_scales(evaluators: Iterable[EvaluatorSpec]) -> dict[str, tuple[float, float]]:
    """Score key → the [min, max] range an evaluator file declares for it (judge scores, custom scores)."""
    scales: dict[str, tuple[float, float]] = {}
    for spec in evaluators:
        scales.update(spec.score_ranges())
    return scales
