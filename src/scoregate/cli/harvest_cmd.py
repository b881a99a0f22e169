"""`scoregate harvest DATASET`: new items from production traces, as a diff of the dataset file (`--apply` writes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console
from scoregate.support.redaction import masked_words
from scoregate.support.terminal_text import neutralize

if TYPE_CHECKING:
    from scoregate.app.harvest import Harvest

console = lazy_console()


def _print(report: Harvest) -> None:
    when = f", {report.start:%Y-%m-%d %H:%M} to {report.end:%Y-%m-%d %H:%M} UTC" if report.start and report.end else ""
    print_wrapped(console, f"harvest {report.dataset} from {report.experiment}: {keep(report.prompt)}{when}")
    found = "1 trace" if report.found == 1 else f"{report.found} traces"
    print_wrapped(
        console,
        f"{found} found by strategy {report.strategy}: {len(report.items)} proposed, {report.already} already "
        f"in the dataset, {len(report.dropped)} near-duplicates dropped, {len(report.skipped)} skipped",
    )
    for trace_id, reason in [*report.dropped, *report.skipped]:
        print_wrapped(console, f"{keep(trace_id)}: {reason}", first="left out: ", first_style="yellow")
    if report.redacted:
        print_wrapped(console, f"masked before writing: {masked_words(report.redacted)}")
    if report.diff:
        console.print(neutralize(report.diff), end="", markup=False, highlight=False, soft_wrap=True)
    if report.applied:
        print_wrapped(
            console, f"wrote {len(report.items)} items to {keep(report.path)}; `scoregate datasets sync` sends them"
        )
    elif report.items:
        print_wrapped(console, "nothing written: review the diff, then run the same command with --apply")
    else:
        print_wrapped(console, "nothing new to propose")


def harvest(
    dataset: Annotated[str, typer.Argument(help="The dataset to add items to (datasets/DATASET.jsonl).")],
    strategy: Annotated[
        str, typer.Option("--strategy", help="lowest, disagreement, uncovered or stratified.")
    ] = "uncovered",
    count: Annotated[int, typer.Option("--count", min=1, help="Propose at most N items.")] = 10,
    threshold: Annotated[
        float | None, typer.Option("--threshold", min=0, max=100, help="Near-duplicate similarity, 0-100.")
    ] = None,
    last: Annotated[
        str | None, typer.Option("--last", help="Window: the last 30m, 24h, 7d (default: the file's).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="The stratified sample's seed.")] = 0,
    experiment: Annotated[str | None, typer.Option("--experiment", help="Whose `production:` entry to read.")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Write the items to the dataset file.")] = False,
    project: ProjectOption = None,
) -> None:
    """Propose dataset items from production traces (redacted, with provenance) as a diff; --apply writes it."""
    from scoregate.app import harvest_dataset

    report = harvest_dataset(
        project_root(project), dataset, strategy=strategy, count=count, threshold=threshold,  # type: ignore[arg-type]
        last=last, seed=seed, experiment=experiment, apply=apply,
    )  # fmt: skip
    _print(report)
