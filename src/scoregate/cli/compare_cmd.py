"""`scoregate compare RUN_A RUN_B`: paired statistics per score, optional pairwise judge, MLflow mirror."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoregate.analysis.compare_runs import CompareOptions, CompareOutcome, compare_stored_runs, parse_margins
from scoregate.analysis.model_ranking import rank_stored_runs
from scoregate.cli.options import ProjectOption, project_root

console = Console()
VERDICT_STYLE = {"better": "green", "non-inferior": "green", "worse": "red", "no detectable difference": "yellow"}


def _n(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}g}"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3g}"


def comparison_table(outcome: CompareOutcome) -> Table:
    """Return one row per compared score: means, Δ with CI, p-values, effect size, W/T/L, MDE, verdict."""
    c = outcome.comparison
    level = f"{1 - c.alpha:.0%}"
    table = Table(title=f"B = {c.b.run_id}  vs  A = {c.a.run_id}", title_justify="left")
    columns = ("score", "n", "mean A", "mean B", "Δ B−A", f"{level} CI", "p Wilcoxon", "p t-test", "p Holm",
               "dz", "W/T/L", "MDE", "verdict")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("score", "verdict", f"{level} CI") else "right")
    for name, score in c.scores.items():
        s = score.stats
        ci = "—" if s.diff_ci_low is None else f"[{_signed(s.diff_ci_low)}, {_signed(s.diff_ci_high)}]"
        label = name if score.direction == "higher is better" else f"{name} (↓)"
        verdict = s.verdict + (f" (margin {s.margin:g})" if s.margin is not None else "")
        table.add_row(
            label, _n(s.n), _n(s.mean_a), _n(s.mean_b), _signed(s.diff), ci, _n(s.wilcoxon_p), _n(s.ttest_p),
            _n(s.p_adjusted), _n(s.cohens_dz), f"{s.wins}/{s.ties}/{s.losses}", _n(s.mde, 2),
            f"[{VERDICT_STYLE.get(s.verdict, 'white')}]{verdict}[/]",
        )  # fmt: skip
    return table


def print_outcome(outcome: CompareOutcome) -> None:
    """Print the pairing counts, the score table, each verdict in words, the preference and the mirror."""
    c = outcome.comparison
    console.print(
        f"paired on {c.shared_items} items present in both runs; dropped {c.a.only_here} only in A "
        f"({c.a.run_id}), {c.b.only_here} only in B ({c.b.run_id})"
    )
    for warning in c.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    console.print(comparison_table(outcome))
    console.print("(↓ lower is better; Holm corrects the Wilcoxon p-values across the scores)")
    for name, score in c.scores.items():
        gap = f" [{score.shared_unmeasured} shared item(s) not measured in both]" if score.shared_unmeasured else ""
        console.print(f"  {escape(name)}: {escape(score.sentence + gap)}", highlight=False)
    if c.skipped_scores:
        console.print("not compared: " + escape("; ".join(f"{k} ({v})" for k, v in c.skipped_scores.items())))
    p = outcome.preference
    if p is not None:
        w = p.win_rate
        rate = "—" if w.win_rate is None else f"{w.win_rate:.2f} [{w.ci_low:.2f}, {w.ci_high:.2f}]"
        console.print(
            f"pairwise judge {p.evaluator} ({p.judge_model}), both orders: B win rate {rate}  "
            f"(B {w.b_wins} / A {w.a_wins} / tie {w.ties}; judged {p.judged} of {p.items} items; "
            f"orders agreed on {p.orders_agreed}; sign test p {_n(w.sign_test_p)})"
        )
        for reason, count in p.null_reasons.items():
            console.print(f"  [yellow]not judged ({count}):[/] {escape(reason)}")
    if outcome.mlflow_run_id:
        console.print(f"mlflow: comparison run {outcome.mlflow_run_id}  (browse with `make mlflow-ui`)")
    for warning in outcome.mlflow_warnings:
        console.print(f"[yellow]mlflow:[/] {escape(warning)}")


def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (A).")],
    run_b: Annotated[str, typer.Argument(help="Candidate run id (B); differences are B − A.")],
    more_runs: Annotated[
        list[str] | None, typer.Argument(help="More runs (e.g. one per model): rank them all instead.")
    ] = None,
    rank: Annotated[
        bool, typer.Option("--rank", help="Rank the runs (paired tests, win rates, Pareto fronts), even two.")
    ] = False,
    metric: Annotated[str, typer.Option("--metric", help="The score to rank by, with --rank or 3+ runs.")] = "eqs",
    judge: Annotated[
        bool, typer.Option("--judge", help="Also ask the pairwise judge (ev_preference_v1), in both orders.")
    ] = False,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="Model name from scoregate.yaml for the pairwise judge.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    margin: Annotated[
        list[str] | None,
        typer.Option("--margin", help="SCORE=VALUE: test non-inferiority of SCORE within VALUE (repeatable)."),
    ] = None,
    lower_is_better: Annotated[
        list[str] | None, typer.Option("--lower-is-better", help="SCORE where smaller is better (repeatable).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the judge response cache.")
    ] = False,
    no_mlflow: Annotated[bool, typer.Option("--no-mlflow", help="Do not mirror the comparison to MLflow.")] = False,
    eval_rows: Annotated[
        bool, typer.Option("--eval-rows", help="Also log both runs' per-item scores as MLflow evaluation rows.")
    ] = False,
    project: ProjectOption = None,
) -> None:
    """Compare two runs item by item (Δ with CI, Wilcoxon, t-test, dz, Holm, verdicts), or rank several."""
    if more_runs or rank:
        ranking = rank_stored_runs(project_root(project), [run_a, run_b, *(more_runs or [])], metric=metric)
        typer.echo(json.dumps(ranking.to_dict(), indent=2, default=str) if as_json else ranking.to_markdown())
        _report(project_root(project), [run_a, run_b, *(more_runs or [])], metric, quiet=as_json)
        return
    options = CompareOptions(
        margins=parse_margins(margin or []),
        lower_is_better=tuple(lower_is_better or ()),
        judge=judge,
        judge_model=judge_model,
        use_cache=not no_cache,
        mirror_mlflow=not no_mlflow,
        eval_rows=eval_rows,
    )
    outcome = compare_stored_runs(project_root(project), run_a, run_b, options)
    if as_json:
        typer.echo(json.dumps(outcome.to_dict(), indent=2, default=str))
    else:
        print_outcome(outcome)
    _report(project_root(project), [run_a, run_b], None, quiet=as_json)


def _report(root: Path, run_ids: list[str], metric: str | None, *, quiet: bool) -> None:
    """Write the comparison's HTML report and say where (on stderr with --json, so stdout stays JSON)."""
    from scoregate.errors import ScoregateError
    from scoregate.report.write import report_runs

    try:
        path = report_runs(root, run_ids, metric=metric)
    except ScoregateError as exc:  # the comparison is printed; its page is not essential to it
        typer.echo(f"report not written: {exc.render()}", err=True)
        return
    typer.echo(f"report: {path}", err=quiet)
