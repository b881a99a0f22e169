"""`scoregate rank`: several runs of one dataset ranked with paired tests, win rates and Pareto fronts."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

console = lazy_console()


def rank(
    run_ids: Annotated[list[str], typer.Argument(help="Two or more runs of the same dataset (e.g. one per model).")],
    metric: Annotated[
        str | None, typer.Option(help="The score to rank by (default: the experiment's primary metric).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranking as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Rank runs: paired tests, win-rate matrix, Pareto fronts (accuracy vs latency and cost), best by metric."""
    from scoregate.app import rank_stored_runs

    ranking = rank_stored_runs(project_root(project), run_ids, metric=metric)
    if as_json:
        typer.echo(json.dumps(ranking.to_dict(), indent=2))
    else:
        from scoregate.cli.render import print_ranking

        print_ranking(console, ranking)
