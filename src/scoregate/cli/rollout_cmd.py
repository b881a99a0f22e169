"""`scoregate rollout start | status | watch`: a canary label, its live test, promote or roll back with a receipt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from scoregate.cli.layout import keep, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import lazy_console

app = typer.Typer(help="Canary rollouts: start one, watch its live scores to a decision, status.", no_args_is_help=True)
console = lazy_console()


def _bounds(low: float | None, high: float | None, fmt: str = "{:.3g}") -> str:
    return "—" if low is None or high is None else f"[{fmt.format(low)}, {fmt.format(high)}]"


def reading_line(r: dict[str, Any]) -> str:
    """Return one poll's reading (its dict form) in one sentence: the decision, the units, the difference, the split."""
    share = "—" if r["share"] is None else f"{r['share']:.1%}"
    return (
        f"poll {r['poll']}: {r['decision']} — {r['units']} units, difference "
        f"{_bounds(r['lower'], r['upper'])}; canary share {share} of {r['assigned']} sessions"
    )


def state_words(r: Any) -> str:
    """Return where a rollout's labels stand, in words that fit its state."""
    if r.state == "live":
        return f"live; canary v{r.candidate} at {r.share:.0%}, production v{r.production}"
    if r.state == "promoted":
        return f"promoted; v{r.candidate} holds production and canary (production was v{r.production})"
    ended = "rolled back" if r.state == "rolled_back" else "halted"
    return f"{ended}; canary back on production's v{r.production} (the canary was v{r.candidate} at {r.share:.0%})"


@app.command("start")
def rollout_start_command(
    prompt: Annotated[str, typer.Argument(help="The prompt's name (its Langfuse name).")],
    version: Annotated[int, typer.Option("--version", min=1, help="The Langfuse version to serve as the canary.")],
    share: Annotated[str, typer.Option("--share", help="Share of users or sessions served the canary: 10% or 0.1.")],
    metric: Annotated[str, typer.Option("--metric", help="The score that decides (its live traces' score name).")],
    score_range: Annotated[str, typer.Option("--range", metavar="MIN,MAX", help="The deciding score's range.")] = "0,1",
    better: Annotated[
        bool, typer.Option("--better", help="Promote only a canary shown better (default: shown not worse).")
    ] = False,
    margin: Annotated[
        float, typer.Option("--margin", min=0, help="Largest tolerated loss, in score units (not with --better).")
    ] = 0.0,
    lower_is_better: Annotated[bool, typer.Option("--lower-is-better", help="Smaller scores are better.")] = False,
    window: Annotated[str, typer.Option("--window", help="Time window the two versions are compared in.")] = "1h",
    guardrail: Annotated[
        list[str] | None,
        typer.Option(
            "--guardrail",
            metavar="NAME=LIMIT",
            help="error_rate, p95_latency_ms or cost_per_call_usd with its limit; a breach rolls back (repeatable).",
        ),
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Move `canary` to a version whose gates passed (what `promote` requires) and start the rollout's record."""
    from scoregate.app import Rollouts

    low, _, high = score_range.partition(",")
    try:
        bounds = (float(low), float(high))
    except ValueError:
        raise typer.BadParameter(f"write MIN,MAX, e.g. 0,1 or 1,5; not {score_range!r}", param_hint="--range") from None
    rollouts = Rollouts(project_root(project))
    record = rollouts.start(
        prompt, version=version, share=share, metric=metric, score_range=bounds, margin=margin,
        question="better" if better else "non-inferior", lower_is_better=lower_is_better, window=window,
        guardrails=tuple(guardrail or ()),
    )  # fmt: skip
    print_wrapped(
        console,
        f"rollout of {prompt}: `canary` on v{record.candidate}, `production` on v{record.production}; serve "
        f"`canary` to {record.share:.0%} of sessions (scoregate.support.canary_assignment.canary_label)",
    )
    for note in rollouts.notes:
        print_wrapped(console, note, style="yellow")
    print_wrapped(console, f"then: `scoregate rollout watch {prompt}`")


@app.command("status")
def rollout_status_command(
    prompt: Annotated[str | None, typer.Argument(help="One prompt's rollout (default: all).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rollouts as JSON.")] = False,
    markdown: Annotated[
        str | None, typer.Option("--markdown", metavar="FILE", help="Also write the status as Markdown to FILE.")
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Say where each rollout stands: versions, share, the last poll's figures, the decision, what to run next."""
    from scoregate.app import Rollouts

    views = Rollouts(project_root(project)).status(prompt)
    if as_json:
        typer.echo(json.dumps([v.to_dict() for v in views], indent=2, default=str))
    else:
        if not views:
            print_wrapped(
                console, "no rollout: start one with `scoregate rollout start PROMPT --version N --share 10%`"
            )
        for view in views:
            r = view.record
            print_wrapped(console, f"{r.prompt}: {state_words(r)}")
            if view.last is not None:
                print_wrapped(console, reading_line(view.last), first="  ", indent="    ")
                print_wrapped(console, str(view.last["reason"]), first="  ", indent="    ")
            if view.command:
                print_wrapped(console, f"next: `{view.command}`", first="  ", indent="    ")
    if markdown is not None:
        from scoregate.cli.markdown_evidence import rollout_markdown, write_markdown

        write_markdown(Path(markdown), rollout_markdown(views))
        print_wrapped(console, keep("markdown:", markdown))


@app.command("watch")
def rollout_watch_command(
    prompt: Annotated[str, typer.Argument(help="The prompt whose rollout to watch.")],
    scores: Annotated[
        Path | None,
        typer.Option(
            "--scores",
            help="Read the live traces from this JSON-lines file (time, version, session, score, error...) "
            "instead of Langfuse.",
        ),
    ] = None,
    environment: Annotated[
        str | None,
        typer.Option(
            "--environment",
            help="Read only the Langfuse traces of this environment (e.g. production; default: every one).",
        ),
    ] = None,
    auto: Annotated[bool, typer.Option("--auto", help="Carry the decision out (labels moved, audited).")] = False,
    every: Annotated[float, typer.Option("--every", min=0, help="Seconds between polls.")] = 60.0,
    polls: Annotated[
        int | None, typer.Option("--polls", min=1, help="Stop after N polls (default: a decision).")
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Poll both versions' live calls and scores (on Langfuse, or --scores FILE); after each poll decide promote,
    roll back, halt or continue."""
    from scoregate.app import Rollouts

    def show(reading: Any) -> None:
        print_wrapped(console, reading_line(reading.to_dict()))

    outcome = Rollouts(project_root(project)).watch(
        prompt, scores, environment=environment, auto=auto, polls=polls, every_s=every, on_reading=show
    )
    last = outcome.readings[-1] if outcome.readings else None
    if last is not None and last.decision != "continue":
        print_wrapped(console, f"decision: {last.decision} — {last.reason}")
    for done in outcome.acted:
        print_wrapped(console, done, first="done: ")
    for warning in outcome.warnings:
        print_wrapped(console, warning, first="warning: ", style="yellow")
    if outcome.command:
        print_wrapped(console, f"to carry it out: `{outcome.command}`")
