"""`scoregate traces score`: the file judges over an experiment's production traces, scores posted onto them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

if TYPE_CHECKING:
    from scoregate.app.traces_score import TracesScore

traces_app = typer.Typer(help="Production traces in Langfuse: scored by the file judges.", no_args_is_help=True)
console = lazy_console()


def _print(report: TracesScore) -> None:
    when = ""
    if report.start is not None and report.end is not None:
        when = f", {report.start:%Y-%m-%d %H:%M} to {report.end:%Y-%m-%d %H:%M} UTC"
    print_wrapped(console, f"traces score {report.experiment}: {keep(report.prompt)}{when}")
    found = "1 trace" if report.found == 1 else f"{report.found} traces"
    print_wrapped(console, f"{found} found, {report.selected} selected, {len(report.skipped)} skipped")
    for trace_id, reason in report.skipped:
        print_wrapped(console, f"{keep(trace_id)}: {reason}", first="skipped: ", first_style="yellow")
    if report.dry_run:
        if report.forecast is not None:
            from scoregate.cli.forecast_render import print_forecast

            print_forecast(console, report.forecast)
        print_wrapped(console, f"dry run: {report.judged_before} judge results already kept, nothing judged or posted")
        return
    print_wrapped(
        console,
        f"judged: {report.judged_now} now, {report.judged_before} before (kept in {keep(report.ledger)})",
    )
    print_wrapped(
        console,
        f"calls: {report.calls} ({report.failed_calls} failed), {report.tokens_in:,} tokens in, "
        f"{report.tokens_out:,} out, ${report.cost_usd:.4f}",
    )
    print_wrapped(
        console,
        f"scores: {report.posted} of {report.to_post - report.already_posted} posted, {report.already_posted} "
        "posted before",
    )
    for reason, count in sorted(report.unmeasured.items()):
        print_wrapped(console, f"{count} × {reason}", first="not measured: ", first_style="yellow")
    for message in report.refused:
        print_wrapped(console, message, first="refused: ", first_style="red")


@traces_app.command("score")
def score(
    experiment: Annotated[str, typer.Argument(help="The experiment whose `production:` entry selects the traces.")],
    last: Annotated[
        str | None, typer.Option("--last", help="Window: the last 30m, 24h, 7d (default: the file's).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Score the newest N traces only.")] = None,
    sample: Annotated[int | None, typer.Option("--sample", min=1, help="Score a random sample of N traces.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed.")] = 0,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="Judge model (scoregate.yaml name).")] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="Refuse when the forecast exceeds it.")
    ] = None,
    budget_minutes: Annotated[
        float | None, typer.Option("--budget-minutes", help="Refuse when the forecast exceeds it.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Fetch and forecast only; no model call.")] = False,
    project: ProjectOption = None,
) -> None:
    """Judge an experiment's production traces with its file judges; post the scores onto the traces, once."""
    from scoregate.app import score_traces

    report = score_traces(
        project_root(project), experiment, last=last, limit=limit, sample=sample, seed=seed,
        judge_model=judge_model, budget_usd=budget_usd, budget_minutes=budget_minutes, dry_run=dry_run,
    )  # fmt: skip
    _print(report)
    if report.refused:
        raise typer.Exit(5)
