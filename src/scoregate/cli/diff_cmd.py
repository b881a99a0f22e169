"""`scoregate diff RUN_A RUN_B`: the items both runs share, largest score change first, outputs side by side."""

from __future__ import annotations

from typing import Annotated

import typer

from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()


def diff(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (A).")],
    run_b: Annotated[str, typer.Argument(help="Candidate run id (B); deltas are B − A.")],
    by: Annotated[
        str | None, typer.Option("--by", help="Sort by the largest change of this score (default: primary metric).")
    ] = None,
    item: Annotated[str | None, typer.Option("--item", help="Only this item.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the N largest changes.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diff as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Show the items two runs share, sorted by the largest change of a score, with both outputs and a word diff."""
    from scoregate.app import StoredRuns
    from scoregate.cli.diff_render import print_run_diff

    result = StoredRuns(project_root(project)).diff(run_a, run_b, by=by, item=item, limit=limit)
    if as_json:
        result.write_json(lambda text: typer.echo(text, nl=False))  # streamed, item by item
    else:
        print_run_diff(console, result)
