"""`scoregate report RUN [RUN …] [-o FILE]`: one self-contained HTML page to open in a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.cli.options import ProjectOption, project_path, project_root


def report(
    run_ids: Annotated[
        list[str], typer.Argument(help="One run, or several of one dataset (the first is the baseline).")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Where to write the HTML (default: runs/<id>/report.html; two runs: runs/<B>/compare-<A>.html; "
            "more: runs/<first>/rank-<hash>.html).",
        ),
    ] = None,
    metric: Annotated[
        str | None, typer.Option(help="The score that ranks several runs (default: eqs, else the first gated score).")
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Write an HTML report of a run, a comparison of two runs, or a ranking of several; print its path."""
    from scoregate.app import report_runs

    if output is not None:
        output = project_path(project, output)
        if output.is_dir():
            raise typer.BadParameter(f"{output} is a folder; name the file to write, e.g. report.html", param_hint="-o")
    from scoregate.cli.layout import keep, print_wrapped
    from scoregate.support.console import lazy_console

    path = report_runs(project_root(project), run_ids, output=output, metric=metric)
    print_wrapped(lazy_console(), keep("report:", str(path)))
