"""`scoregate coverage DATASET`: how much production traffic the dataset covers, and the uncovered clusters."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

if TYPE_CHECKING:
    from scoregate.app.coverage import Coverage

console = lazy_console()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _print(report: Coverage) -> None:
    when = f", {report.start:%Y-%m-%d %H:%M} to {report.end:%Y-%m-%d %H:%M} UTC" if report.start and report.end else ""
    print_wrapped(console, f"coverage of {report.dataset} by {report.experiment}: {keep(report.prompt)}{when}")
    share = "no trace measured" if report.share is None else f"{report.share:.1%}"
    print_wrapped(
        console,
        f"{report.covered} of {_count(report.traces, 'trace')} covered ({share}): an item at similarity "
        f"{report.threshold:g} or more among {_count(report.items, 'item')}; {len(report.skipped)} skipped",
    )
    for trace_id, reason in report.skipped:
        print_wrapped(console, f"{keep(trace_id)}: {reason}", first="skipped: ", first_style="yellow")
    uncovered = report.traces - report.covered
    if report.clusters:
        print_wrapped(console, f"uncovered: {_count(uncovered, 'trace')} in {_count(len(report.clusters), 'cluster')}")
    for cluster in report.clusters:
        example = f"{_count(cluster.count, 'trace')}, e.g. {keep(cluster.trace_id)}: {cluster.example}"
        print_wrapped(console, example, indent="  ")
    if report.html_path:
        print_wrapped(console, f"report: {keep(report.html_path)}")


def coverage(
    dataset: Annotated[str, typer.Argument(help="The dataset (datasets/DATASET.jsonl).")],
    threshold: Annotated[
        float | None, typer.Option("--threshold", min=0, max=100, help="Similarity that covers a trace, 0-100.")
    ] = None,
    last: Annotated[
        str | None, typer.Option("--last", help="Window: the last 30m, 24h, 7d (default: the file's).")
    ] = None,
    experiment: Annotated[str | None, typer.Option("--experiment", help="Whose `production:` entry to read.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the coverage as JSON.")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write an HTML report to this file.")] = None,
    project: ProjectOption = None,
) -> None:
    """Measure the share of production traffic the dataset covers; group the uncovered traffic into clusters."""
    from scoregate.app import measure_coverage

    report = measure_coverage(
        project_root(project), dataset, threshold=threshold, last=last, experiment=experiment, html_path=html
    )
    if as_json:
        import json

        typer.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    _print(report)
