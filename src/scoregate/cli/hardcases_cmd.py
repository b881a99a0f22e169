"""`scoregate hardcases add`: grow the hard-cases dataset from a run's worst items."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

if TYPE_CHECKING:
    from scoregate.app.hardcases import HardcasesReport

app = typer.Typer(help="Keep known failures as a dataset every experiment can include.", no_args_is_help=True)
console = lazy_console()
DEFAULT_DATASET = "hardcases"  # scoregate.app.hardcases.DEFAULT_DATASET, kept here so --help imports nothing


def _print(report: HardcasesReport) -> None:
    verb = "would append" if report.dry_run else "appended"
    print_wrapped(
        console, f"run {report.run_id}: {report.matched} of {report.items_in_run} items match {report.condition}"
    )
    for item_id, value in report.appended:
        print_wrapped(console, f"{item_id}  {report.condition.metric} = {value:g}", first="  + ", first_style="green")
    print_wrapped(console, f"{verb} {len(report.appended)} to {report.dataset}")
    if report.already_present:
        shown = ", ".join(report.already_present)
        print_wrapped(console, f"skipped {len(report.already_present)} already there: {shown}")
    if report.over_limit:
        print_wrapped(console, f"left {report.over_limit} matching beyond --limit")
    nulls = sum(report.null_metric.values())
    if nulls:
        reasons = "; ".join(f"{r} ({n})" for r, n in report.null_metric.most_common(3))
        print_wrapped(console, f"{nulls} not considered: {report.condition.metric} is null — {reasons}", style="yellow")


@app.command("add")
def add_command(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    where: Annotated[
        str,
        typer.Option(
            "--where", help='Which items: `<score> <op> <number>`, op < <= > >= ==, e.g. "WeightedQuality < 3.5".'
        ),
    ],
    limit: Annotated[int | None, typer.Option(min=1, help="Append at most N items (the worst first).")] = None,
    dataset: Annotated[str, typer.Option(help="Dataset to grow (datasets/<name>.jsonl).")] = DEFAULT_DATASET,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be appended; write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Append a run's items matching --where, worst first, to datasets/hardcases.jsonl (ids already there skipped)."""
    from scoregate.app import add_hardcases

    report = add_hardcases(project_root(project), run_id, where, limit=limit, dataset=dataset, dry_run=dry_run)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print(report)
