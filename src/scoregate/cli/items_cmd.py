"""`scoregate items flaky EXPERIMENT`: the items whose verdict flips between runs, with their history."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from scoregate.cli.gate_view import print_flaky_history
from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

app = typer.Typer(help="Items across the runs of an experiment.", no_args_is_help=True)
console = lazy_console()


@app.command("flaky")
def flaky_command(
    experiment: Annotated[str, typer.Argument(help="Experiment name from scoregate.yaml.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """List the items whose verdict on an every_item gate flips between runs (kept out of those gates)."""
    from scoregate.app import flaky_report

    report = flaky_report(project_root(project), experiment)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    if not report.gates:
        print_wrapped(console, f"experiment {experiment} has no every_item gate: no item verdict to track")
        return
    skipped = f"; left out: {', '.join(report.skipped)}" if report.skipped else ""
    read = f"{report.runs} run(s) of {experiment} read (newest {report.window_runs} at most){skipped}"
    if not report.items:
        rule = f"flip rate above {report.threshold:.0%}, at least {report.min_observations} observations"
        print_wrapped(console, f"no flaky items ({rule}; gates {', '.join(report.gates)}); {read}")
        return
    print_flaky_history(console, report.to_dict(), report.to_dict()["items"])
    print_wrapped(console, read)
