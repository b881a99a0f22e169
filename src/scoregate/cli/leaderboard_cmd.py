"""`scoregate leaderboard`: the best score per item of every model and prompt version, across runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoregate.cli.options import ProjectOption, project_root

if TYPE_CHECKING:
    from rich.console import Console


def leaderboard(
    experiment: Annotated[str | None, typer.Option(help="Only runs of this experiment.")] = None,
    metric: Annotated[
        str | None, typer.Option(help="Score to rank by; default: the first composite, else the first numeric score.")
    ] = None,
    lower_is_better: Annotated[
        bool, typer.Option("--lower-is-better", help="Rank ascending (e.g. hallucination_count).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print leaderboard.json instead of a table.")] = False,
    project: ProjectOption = None,
) -> None:
    """Rank models and prompt versions over all valid runs; write runs/leaderboard.json."""
    from scoregate.app import update_leaderboard
    from scoregate.cli.layout import print_wrapped
    from scoregate.support.console import lazy_console

    written = update_leaderboard(
        project_root(project), experiment=experiment, metric=metric, lower_is_better=lower_is_better
    )
    if as_json:
        typer.echo(json.dumps(written.board, indent=2))
        return
    console = lazy_console()
    print_leaderboard(console, written.board, lower_is_better=lower_is_better)
    print_wrapped(console, f"written to {written.path}")


def print_leaderboard(console: Console, board: dict[str, Any], *, lower_is_better: bool) -> None:
    """Print the entries as a table (identifiers whole, one prompt per line), else as plain lines; then notes."""
    from rich.table import Table

    from scoregate.cli.layout import keep, print_table, print_wrapped
    from scoregate.support.console import escape

    direction = "lower is better" if lower_is_better else "higher is better"
    table = Table(title=escape(f"{board['metric']} ({direction}), best per item"), title_justify="left")
    for column, justify in [("#", "right"), ("model", "left"), ("prompt", "left"), ("score", "right"),
                            ("items", "right"), ("tokens\nspent", "right"), ("cost $", "right")]:  # fmt: skip
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    lines = []
    for row in board["entries"]:
        items = f"{row['items_covered']}/{row['dataset_items']}" + (" low" if row["low_coverage"] else "")
        score = "—" if row["score"] is None else f"{row['score']:.3f}"
        tokens = "—" if row["tokens_total"] is None else f"{row['tokens_total']:,}"
        cost = "—" if row["cost_usd_total"] is None else f"{row['cost_usd_total']:.4f}"
        prompts = row["prompts"].split(",")
        table.add_row(str(row["rank"]), escape(row["model"]), escape("\n".join(prompts)), score, items, tokens, cost)
        fields = [f"#{row['rank']}", row["model"], f"score {score}", f"items {items}", f"tokens spent {tokens}",
                  f"cost ${cost}"]  # fmt: skip
        lines.append("  ".join(fields) + "".join(f"\n    {prompt}" for prompt in prompts))
    print_table(console, table, lines)
    for row in board["entries"]:
        print_wrapped(console, f"#{row['rank']} best run {row['best_run']}")
        if row.get("cost_unknown_runs") and row["cost_usd_total"] is not None:
            priced = row["runs"] - row["cost_unknown_runs"]
            print_wrapped(console, f"#{row['rank']} cost covers {keep(f'{priced} of', str(row['runs']))} runs "
                                   f"({row['cost_unknown_runs']} have no known price)")  # fmt: skip
    cached = sum(int(row.get("tokens_cached_total") or 0) for row in board["entries"])
    if cached:
        print_wrapped(
            console,
            f"{keep(f'{cached:,}', 'tokens')} of calls answered from the response cache are not counted as spent",
        )
    flagged = sum(r["low_coverage"] for r in board["entries"])
    if flagged:
        print_wrapped(
            console,
            f"{flagged} entr{'y' if flagged == 1 else 'ies'} marked `low` cover less than "
            f"{board['min_coverage']:.0%} of the dataset: not comparable, ranked last",
        )
    for skip in board["skipped"]:
        print_wrapped(console, f"skipped {skip['run_id']}: {skip['reason']}")
