"""`scoregate compare RUN_A RUN_B`: paired statistics per score, optional pairwise judge, MLflow mirror."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scoregate.cli.layout import keep, print_wrapped, signed
from scoregate.cli.mirror_flags import NoMirrorOption, mirrors_off
from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import print_ranking, print_table_or_lines, run_label
from scoregate.support.console import escape, lazy_console

if TYPE_CHECKING:
    from rich.table import Table

    from scoregate.app.comparison import CompareOutcome, RunSide, ScoreComparison

console = lazy_console()
err_console = lazy_console(stderr=True)
VERDICT_STYLE = {
    "better": "green", "non-inferior": "green", "equivalent": "green", "worse": "red",
    "inconclusive": "yellow", "increased": "cyan", "decreased": "cyan", "no change": "white",
    "cannot compare": "magenta",
}  # fmt: skip
TESTS_LEGEND = (
    "W/T/L: items where B wins / ties / loses against A (— for a score without direction: a win needs one); "
    "dz: Cohen's dz, the mean Δ in standard deviations of Δ; MDE: minimum detectable effect, the smallest "
    "Δ these n items would detect with 80% power"
)


def _n(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.{digits}g}"  # 127, never 1.27e+02


def packed(chunks: list[str], width: int, indent: str = "   ") -> list[str]:
    """Join `label value` chunks two spaces apart into indented lines of at most `width` cells, never
    splitting a chunk (so no value wraps away from its label); a chunk wider than a line gets its own."""
    from rich.cells import cell_len

    lines: list[str] = []
    current = ""
    for chunk in chunks:
        joined = f"{current}  {chunk}" if current else chunk
        if current and cell_len(indent + joined) > width:
            lines.append(indent + current)
            joined = chunk
        current = joined
    return [*lines, indent + current] if current else lines


def _level(level: float) -> str:
    return f"{level:.1%}".replace(".0%", "%")


def _ci(s: Any) -> str:
    return "—" if s.diff_ci_low is None else f"[{signed(s.diff_ci_low)}, {signed(s.diff_ci_high)}] {_level(s.ci_level)}"


def _verdict(score: Any) -> str:
    s = score.stats
    return s.verdict + (f" (margin {s.margin:g})" if s.margin is not None else "") + ("" if score.primary else " *")


def comparison_table(outcome: CompareOutcome) -> Table:
    """Return one row per compared score: direction, n, means, Δ with the CI its verdict follows, verdict."""
    from rich.table import Table

    from scoregate.support.figures import direction_arrow

    c = outcome.comparison
    table = Table(title=escape(f"B = {c.b.run_id}  vs  A = {c.a.run_id}"), title_justify="left")
    for column in ("score", "n", "mean A", "mean B", "Δ B−A", "CI of Δ (level)", "verdict"):
        table.add_column(
            column, no_wrap=True, justify="right" if column in ("n", "mean A", "mean B", "Δ B−A") else "left"
        )
    for name, score in c.scores.items():
        s = score.stats
        verdict = f"[{VERDICT_STYLE.get(s.verdict, 'white')}]{escape(_verdict(score))}[/]"
        table.add_row(
            f"{escape(name)} {direction_arrow(score.direction)}", _n(s.n), _n(s.mean_a), _n(s.mean_b), signed(s.diff),
            _ci(s), verdict,
        )  # fmt: skip
    return table


def comparison_lines(outcome: CompareOutcome, width: int = 80) -> list[str]:
    """Return the comparison table's facts as plain lines of at most `width` cells (for narrow consoles)."""
    from scoregate.support.figures import direction_arrow

    lines = []
    for name, score in outcome.comparison.scores.items():
        s = score.stats
        lines.append(f"{name} {direction_arrow(score.direction)}  {_verdict(score)}")
        chunks = [f"n {_n(s.n)}", f"A {_n(s.mean_a)}", f"B {_n(s.mean_b)}", f"Δ {signed(s.diff)}", f"CI {_ci(s)}"]
        lines += packed(chunks, width)
    return lines


def tested(outcome: CompareOutcome) -> dict[str, ScoreComparison]:
    """The scores with a test to show: not those with no change at all (nothing to test, said once instead)."""
    return {name: score for name, score in outcome.comparison.scores.items() if score.stats.verdict != "no change"}


def tests_table(outcome: CompareOutcome) -> Table:
    """Return one row per tested score: the p-values (raw and Holm), effect size, W/T/L and MDE."""
    from rich.table import Table

    table = Table(title="tests (shown beside the verdicts; they do not decide them)", title_justify="left")
    for column in ("score", "p Wilcoxon", "p t-test", "p Holm", "dz", "W/T/L", "MDE"):
        table.add_column(column, no_wrap=True, justify="left" if column == "score" else "right")
    for name, score in tested(outcome).items():
        table.add_row(escape(name), *_test_cells(score))
    return table


def _test_cells(score: ScoreComparison) -> tuple[str, ...]:
    s = score.stats
    wtl = "—" if score.direction == "none" else f"{s.wins}/{s.ties}/{s.losses}"  # a win needs a direction
    return _n(s.wilcoxon_p), _n(s.ttest_p), _n(s.p_adjusted), _n(s.cohens_dz), wtl, _n(s.mde)


def tests_lines(outcome: CompareOutcome, width: int = 80) -> list[str]:
    """Return the tests table's facts as plain lines of at most `width` cells: the name, then its values."""
    lines = []
    labels = ("p Wilcoxon", "p t-test", "p Holm", "dz", "W/T/L", "MDE")
    for name, score in tested(outcome).items():
        lines += [name, *packed([f"{k} {v}" for k, v in zip(labels, _test_cells(score), strict=True)], width)]
    return lines


def side_line(side: str, run: RunSide) -> str:
    """Return `A: <model> · <prompt>@<version>, … (<run id>) · <n> items`, with the run's --limit if it had one."""
    limit = f" (--limit {run.limit})" if run.limit is not None else ""
    return f"{side}: {run_label(run.model, run.prompts, run.run_id)} · {run.items} items{limit}"


def unchanged(outcome: CompareOutcome) -> list[str]:
    """The scores with no change on every item both runs measured (said once, together, not one by one)."""
    scores = outcome.comparison.scores.items()
    return [name for name, score in scores if score.stats.verdict == "no change" and not score.shared_unmeasured]


def print_outcome(outcome: CompareOutcome) -> None:
    """Print the pairing counts, the score tables, each verdict in words and the preference (`print_mirror`: the
    MLflow mirror)."""
    c = outcome.comparison
    print_wrapped(
        console,
        f"paired on {c.shared_items} items present in both runs; dropped {c.a.only_here} only in A "
        f"({c.a.run_id}), {c.b.only_here} only in B ({c.b.run_id})",
    )
    for side, run in (("A", c.a), ("B", c.b)):
        print_wrapped(console, side_line(side, run))
    if c.a.only_here or c.b.only_here:
        print_wrapped(
            console,
            f"the runs cover different items: every mean, Δ and test below is over the {c.shared_items} paired "
            "items, not each run's own",
        )
    for warning in c.warnings:
        print_wrapped(console, warning, first="warning: ", first_style="yellow")
    primary = ", ".join(c.primary) or "none"
    print_wrapped(console, f"primary: {primary}  ({c.primary_source})")
    print_table_or_lines(console, comparison_table(outcome), comparison_lines(outcome, console.width))
    print_wrapped(
        console,
        "↑ higher is better, ↓ lower is better, · no direction (never better or worse); "
        "* secondary: exploratory, Holm-adjusted p and CI",
    )
    if tested(outcome):
        print_table_or_lines(console, tests_table(outcome), tests_lines(outcome, console.width))
        print_wrapped(console, TESTS_LEGEND)
        print_wrapped(console, f"p Wilcoxon: {c.wilcoxon_variant}; p Holm across the secondary scores")
    print_wrapped(console, f"rule: {c.verdict_rule}")
    same = unchanged(outcome)
    for name, score in c.scores.items():
        if name in same:
            continue
        gap = f" [{score.shared_unmeasured} shared item(s) not measured in both]" if score.shared_unmeasured else ""
        print_wrapped(console, f"{name}: {score.sentence}{gap}", first="  ", indent="    ")
    if same:
        which = f"all {len(same)} scores" if len(same) == len(c.scores) else f"{len(same)} score(s): {', '.join(same)}"
        print_wrapped(
            console,
            f"no change in {which} — every paired item scored the same in both runs, so there is "
            "no difference to test (no p-value, dz or MDE)",
            first="  ",
            indent="    ",
        )
    if c.skipped_scores:
        print_wrapped(console, "not compared: " + "; ".join(f"{k} ({v})" for k, v in c.skipped_scores.items()))
    if outcome.estimate == "corrected":
        from scoregate.cli.corrected_render import print_corrected_differences

        print_corrected_differences(console, outcome.to_dict()["scores"])
    p = outcome.preference
    if p is not None:
        w = p.win_rate
        rate = "—" if w.win_rate is None else f"{w.win_rate:.0%} [{w.ci_low:.0%}, {w.ci_high:.0%}]"
        print_wrapped(
            console,
            f"pairwise judge {p.evaluator} ({p.judge_model}), both orders: B win rate {rate}  "
            f"(B {w.b_wins} / A {w.a_wins} / tie {w.ties}; judged {p.judged} of {p.items} items; "
            f"orders agreed on {p.orders_agreed}; sign test p {_n(w.sign_test_p)})",
        )
        for reason, count in p.null_reasons.items():
            print_wrapped(console, reason, first=f"  not judged ({count}): ", indent="    ", first_style="yellow")


def print_mirror(outcome: CompareOutcome) -> None:
    """Print where each sink mirrored the comparison, and what could not be mirrored."""
    for name, mirror in outcome.mirrors.items():
        for line in mirror.lines:
            print_wrapped(console, line)
        for warning in mirror.warnings:
            print_wrapped(console, warning, first=f"{name}: ", first_style="yellow")


def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run id (A).")],
    run_b: Annotated[str, typer.Argument(help="Candidate run id (B); differences are B − A.")],
    more_runs: Annotated[
        list[str] | None, typer.Argument(help="More runs (e.g. one per model): rank them all instead.")
    ] = None,
    rank: Annotated[
        bool, typer.Option("--rank", help="Rank the runs (paired tests, win rates, Pareto fronts), even two.")
    ] = False,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            help="Primary metric (repeatable; default: the metrics the gates use). With --rank or 3+ runs: "
            "the score to rank by (default: the experiment's primary metric).",
        ),
    ] = None,
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
    no_mirror: NoMirrorOption = None,
    no_mlflow: Annotated[
        bool, typer.Option("--no-mlflow", help="Do not mirror the comparison to MLflow (= --no-mirror mlflow).")
    ] = False,
    eval_rows: Annotated[
        bool, typer.Option("--eval-rows", help="Also log both runs' per-item scores as MLflow evaluation rows.")
    ] = False,
    markdown: Annotated[
        str | None,
        typer.Option(
            "--markdown", metavar="FILE", help="Also write the comparison as Markdown to FILE (a PR comment)."
        ),
    ] = None,
    estimate: Annotated[
        str | None,
        typer.Option(
            "--estimate",
            help="corrected: also each judge score's corrected paired difference of pass rates, from its "
            "calibration set (default: settings.gate_estimate).",
        ),
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Compare two runs item by item (Δ with CI, Wilcoxon, t-test, dz, Holm, verdicts), or rank several."""
    if more_runs or rank:
        if markdown is not None:
            raise typer.BadParameter("describes a comparison of two runs, not a ranking", param_hint="--markdown")
        if metric and len(metric) > 1:
            raise typer.BadParameter("ranking takes one --metric")
        if estimate == "corrected":
            raise typer.BadParameter("--estimate corrected compares two runs; a ranking reads the raw scores")
        from scoregate.app import rank_stored_runs

        ranking = rank_stored_runs(
            project_root(project), [run_a, run_b, *(more_runs or [])], metric=metric[0] if metric else None
        )
        if as_json:
            typer.echo(json.dumps(ranking.to_dict(), indent=2, default=str))
        else:
            print_ranking(console, ranking)
        _report(
            project_root(project), [run_a, run_b, *(more_runs or [])], metric[0] if metric else None, quiet=as_json
        )[0]()
        return
    if markdown is not None:
        from scoregate.cli.markdown_evidence import check_markdown_path

        check_markdown_path(Path(markdown))
    from scoregate.app import CompareOptions, compare_stored_runs

    options = CompareOptions(
        metrics=tuple(metric or ()),
        margin_texts=margin or (),
        lower_is_better=tuple(lower_is_better or ()),
        judge=judge,
        judge_model=judge_model,
        use_cache=not no_cache,
        no_mirror=mirrors_off(no_mirror, no_mlflow=no_mlflow),
        eval_rows=eval_rows,
        estimate=estimate,
    )
    said: list[Callable[[], None]] = []
    pages: list[Path | None] = []

    def before_mirror(outcome: CompareOutcome) -> None:
        # the report is written before MLflow is imported, so the process never holds both (issue 19: 250 MB)
        if not as_json:
            print_outcome(outcome)
        say, page = _report(project_root(project), [run_a, run_b], None, quiet=as_json, corrected=outcome.corrected)
        said.append(say)
        pages.append(page)

    outcome = compare_stored_runs(project_root(project), run_a, run_b, options, before_mirror=before_mirror)
    if as_json:
        typer.echo(json.dumps(outcome.to_dict(), indent=2, default=str))
    else:
        print_mirror(outcome)
    for say in said:
        say()
    if markdown is not None:
        _write_markdown(project_root(project), outcome, Path(markdown), pages[0] if pages else None, quiet=as_json)


def _write_markdown(root: Path, outcome: CompareOutcome, path: Path, page: Path | None, *, quiet: bool) -> None:
    """`compare --markdown FILE`: the comparison's evidence for a pull request (`markdown_evidence`)."""
    from scoregate.app import StoredRuns
    from scoregate.cli.markdown_evidence import compare_markdown, shown_path, write_markdown

    candidate = StoredRuns(root).view(outcome.comparison.b.run_id)
    write_markdown(path, compare_markdown(outcome, candidate, report=shown_path(root, page)))
    print_wrapped(err_console if quiet else console, keep("markdown:", str(path)))


def _report(
    root: Path, run_ids: list[str], metric: str | None, *, quiet: bool, corrected: dict[str, Any] | None = None
) -> tuple[Callable[[], None], Path | None]:
    """Write the comparison's HTML report (with each judge score's `corrected` difference when asked); return what
    says where (on stderr with --json, so stdout stays JSON) and the page (None when it was not written)."""
    from scoregate.app import report_runs
    from scoregate.errors import ScoregateError

    try:
        path = report_runs(root, run_ids, metric=metric, corrected=corrected)
    except ScoregateError as exc:  # the comparison is printed; its page is not essential to it
        message = f"report not written: {exc.render()}"
        return (lambda: print_wrapped(err_console, message)), None
    return (lambda: print_wrapped(err_console if quiet else console, keep("report:", str(path)))), path
