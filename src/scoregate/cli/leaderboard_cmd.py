"""`scoregate leaderboard`: the best score per item of every model and prompt version, across runs."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from scoregate.cli.options import ProjectOption, project_root


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
    from rich.console import Console
    from rich.table import Table

    from scoregate.analysis.leaderboard import build_leaderboard, write_leaderboard
    from scoregate.catalog.project import load_project

    root = project_root(project)
    settings = load_project(root).config.settings
    runs_dir = root / "runs"
    board = build_leaderboard(
        runs_dir, experiment=experiment, metric=metric, lower_is_better=lower_is_better,
        min_coverage=settings.min_coverage,
    )  # fmt: skip
    path = write_leaderboard(runs_dir, board)
    if as_json:
        typer.echo(json.dumps(board, indent=2))
        return
    console = Console()
    direction = "lower is better" if lower_is_better else "higher is better"
    table = Table(title=f"{board['metric']} ({direction}), best per item", title_justify="left")
    for column, justify in [("#", "right"), ("model", "left"), ("prompt", "left"), ("score", "right"),
                            ("items", "right"), ("tokens", "right"), ("cost $", "right")]:  # fmt: skip
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in board["entries"]:
        items = f"{row['items_covered']}/{row['dataset_items']}" + (" low" if row["low_coverage"] else "")
        table.add_row(
            str(row["rank"]), row["model"], row["prompts"],
            "—" if row["score"] is None else f"{row['score']:.3f}", items,
            "—" if row["tokens_total"] is None else f"{row['tokens_total']:,}",
            "—" if row["cost_usd_total"] is None else f"{row['cost_usd_total']:.4f}",
        )  # fmt: skip
    console.print(table)
    for row in board["entries"]:
        console.print(f"#{row['rank']} best run {row['best_run']}", highlight=False, soft_wrap=True)
    flagged = sum(r["low_coverage"] for r in board["entries"])
    if flagged:
        console.print(
            f"{flagged} entr{'y' if flagged == 1 else 'ies'} marked `low` cover less than "
            f"{board['min_coverage']:.0%} of the dataset: not comparable, ranked last"
        )
    for skip in board["skipped"]:
        console.print(f"skipped {skip['run_id']}: {skip['reason']}", highlight=False, soft_wrap=True)
    console.print(f"written to {path}", soft_wrap=True, highlight=False)
