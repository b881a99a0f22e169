"""`scoregate replay EXPERIMENT --production N`: the last N production inputs through the candidate, judged against
the logged production outputs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console
from scoregate.support.redaction import masked_words

if TYPE_CHECKING:
    from scoregate.app.replay import Replay

console = lazy_console()


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _print(report: Replay) -> None:
    print_wrapped(
        console,
        f"replay {report.experiment}: production {keep(report.prompt)} against the candidate "
        f"{keep(report.candidate_prompt)}",
    )
    print_wrapped(console, f"candidate run {keep(report.candidate_run)}; logged outputs run {keep(report.logged_run)}")
    for trace_id, reason in report.skipped:
        print_wrapped(console, f"{keep(trace_id)}: {reason}", first="not replayed: ", first_style="yellow")
    if report.redacted:
        print_wrapped(console, f"masked before writing: {masked_words(report.redacted)}")
    failed = "".join(f", {count} {why} (counted as losses)" for why, count in sorted(report.failed.items()))
    print_wrapped(
        console,
        f"{report.items} {'item' if report.items == 1 else 'items'}: the candidate won {report.wins}, lost "
        f"{report.losses}, tied {report.ties}{failed}",
    )
    level = f"{report.confidence:.0%}"
    print_wrapped(
        console,
        f"candidate win rate {_rate(report.win_rate)} ({level} CI {_rate(report.ci_low)} to {_rate(report.ci_high)}; "
        "ties count half)",
    )
    print_wrapped(console, f"verdict: {report.verdict}")
    for where, error in sorted(report.mirror_errors.items()):
        print_wrapped(console, f"{keep(where)} mirror failed: {error}", style="yellow")
    print_wrapped(console, f"compare the runs: {keep(f'scoregate compare {report.logged_run} {report.candidate_run}')}")


def replay(
    experiment: Annotated[str, typer.Argument(help="The experiment whose candidate to replay production through.")],
    production: Annotated[int, typer.Option("--production", min=1, help="Replay the last N production inputs.")],
    prompt_version: Annotated[
        int | None,
        typer.Option("--prompt-version", min=1, help="The candidate as this Langfuse version (default: the file)."),
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="The pairwise judge's model (default: the file's).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ask the models again instead of the cache.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the replay as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Run the last N production inputs through the candidate; judge it against the logged outputs."""
    from scoregate.app import replay_experiment

    report = replay_experiment(
        project_root(project), experiment, production=production, prompt_version=prompt_version,
        judge_model=judge_model, use_cache=not no_cache,
    )  # fmt: skip
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print(report)
