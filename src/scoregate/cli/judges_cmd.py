"""`scoregate judges plan` / `apply`: judge files as Langfuse evaluators, a changed judge as a new (green) one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import print_table, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import escape, lazy_console

if TYPE_CHECKING:
    from scoregate.app.judges_promotion import JudgeMove
    from scoregate.app.judges_shadow import ShadowReport
    from scoregate.app.judges_sync import JudgeSyncReport

judges_app = typer.Typer(help="Judges in Langfuse: evaluator files as versioned evaluators.", no_args_is_help=True)
console = lazy_console()
NamesArgument = Annotated[list[str] | None, typer.Argument(help="Evaluator files to take (default: all).")]

_CHANGE = {
    "create": ("to create", "created"),
    "green": ("to create (green)", "created (green)"),
    "describe": ("description to update", "description updated"),
    "unchanged": ("unchanged", "unchanged"),
    "skip": ("stays local", "stays local"),
}


def _print(report: JudgeSyncReport) -> None:
    from rich.table import Table

    table = Table(title=escape(f"judges → {report.host} (server {report.server_version})"), title_justify="left")
    for column in ("file", "live score", "change", "evaluator"):
        table.add_column(column)
    for plan in report.plans:
        change = _CHANGE[plan.action][1 if report.applied else 0]
        held = f"{plan.evaluator_id} v{plan.version}" if plan.evaluator_id else "—"
        table.add_row(escape(plan.file), escape(plan.score or "—"), change, escape(held))
    print_table(console, table)
    for plan in report.plans:
        if plan.blue:
            print_wrapped(
                console,
                f"{plan.file}: rules keep scoring with {', '.join(plan.blue)} (blue); the new evaluator (green) "
                f"scores nothing live until `scoregate judges promote {plan.file}`",
                first="  ",
            )
        for note in plan.notes:
            print_wrapped(console, f"{plan.file}: {note}", first="  ", indent="    ")
    counts = (
        f"{report.count('create')} new, {report.count('green')} green, {report.count('describe')} described, "
        f"{report.count('unchanged')} unchanged, {report.count('skip')} local only"
    )
    _print_rules(report)
    if report.mlflow_problem:
        print_wrapped(console, f"not registered: {report.mlflow_problem}", first="MLflow: ", style="yellow")
    for judge in report.mlflow:
        version = f"v{judge.version}" if judge.version else "next version"
        print_wrapped(console, f"{judge.file} → judge {judge.name} {version} ({judge.action})", first="MLflow: ")
    writes = f"{report.writes} write{'' if report.writes == 1 else 's'}"
    if report.applied:
        print_wrapped(console, f"applied: {writes}, {report.requests} requests; {counts}")
    else:
        print_wrapped(console, f"plan: {writes} to make ({counts}); nothing written")


def _usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _print_rules(report: JudgeSyncReport) -> None:
    from rich.table import Table

    if report.rules_skipped:
        print_wrapped(console, report.rules_skipped, first="rules: ")
        return
    if not report.rules:
        return
    table = Table(title="rules (traffic of the last 7 days)", title_justify="left")
    for column in ("rule", "change", "sampling", "traces a day", "judge calls a day", "cost a day"):
        table.add_column(column, justify="left" if column in ("rule", "change") else "right")
    for rule in report.rules:
        change = rule.action if not rule.changes else f"{rule.action}: {', '.join(rule.changes)}"
        change += "" if rule.enabled or rule.action == "disable" else " (disabled)"
        traffic = "—" if rule.traces_per_day is None else f"{'≥' if rule.capped else ''}{rule.traces_per_day:.1f}"
        calls = str(rule.cost.calls) if rule.cost is not None and rule.orphan is None else "—"
        cost = rule.cost.cost_usd if rule.cost is not None else None
        usd = f"{_usd(cost.expected)} ({_usd(cost.low)} to {_usd(cost.high)})" if cost else "unknown (no price)"
        usd = "—" if rule.orphan is not None else usd
        table.add_row(escape(rule.name), escape(change), f"{rule.sampling:g}", traffic, calls, usd)
    print_table(console, table)
    for rule in report.rules:
        judges = ", ".join(f"{j} → {e or 'the evaluator to create'}" for j, e in rule.assignments.items())
        if rule.orphan is not None:
            done = "disabled" if report.applied or rule.action == "unchanged" else "to be disabled"
            judges = f"no rule file {rule.orphan}; {done}, not deleted (delete it in Langfuse if it should go)"
        print_wrapped(console, f"{rule.name}: {judges}", first="  ", indent="    ")
    for problem in report.over_budget:
        print_wrapped(console, f"{problem}; pass `--force --reason TEXT` to enable it", first="apply will refuse: ")
    if report.forced:
        print_wrapped(console, f"over the budget, forced: {report.forced} (kept in judges.jsonl)", style="yellow")


@judges_app.command("plan")
def judges_plan(names: NamesArgument = None, project: ProjectOption = None) -> None:
    """Show what `judges apply` would create or change in Langfuse (evaluators, rules and their cost a day)."""
    from scoregate.app import sync_project_judges

    _print(sync_project_judges(project_root(project), names or [], dry_run=True))


@judges_app.command("apply")
def judges_apply(
    names: NamesArgument = None,
    force: Annotated[bool, typer.Option("--force", help="Enable rules whose forecast is over the budget.")] = False,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (with --force; kept in judges.jsonl).")] = None,
    project: ProjectOption = None,
) -> None:
    """Create an evaluator per new judge file and a new (green) one per changed judge (never edit one in place),
    then create or update the rules of rules/ once their cost a day is within the budget."""
    from scoregate.app import sync_project_judges

    _print(sync_project_judges(project_root(project), names or [], dry_run=False, force=force, reason=reason))


def _print_shadow(report: ShadowReport) -> None:
    green = report.green or "not in Langfuse yet (`scoregate judges apply` makes it)"
    print_wrapped(console, f"{report.judge} ({report.score_key}): blue {', '.join(report.blue)}; green {green}")
    statistic = "—" if report.agreement is None else f"{report.agreement:+.3f}"
    exact = "—" if report.exact is None else f"{report.exact:.0%}"
    print_wrapped(
        console,
        f"on the last {len(report.pairs)} traces blue scored: green measured {report.measured}, "
        f"{report.metric} with blue {statistic}, same value {exact}; nothing written to Langfuse",
        first="agreement with blue: ",
    )
    for reason, count in report.null_reasons.items():
        print_wrapped(console, f"{count} × {reason}", first="  not measured: ", indent="    ")
    if report.canary is None:
        print_wrapped(console, report.canary_note or "", first="calibration: ")
        return
    drift = report.canary.drift
    print_wrapped(
        console,
        f"{drift.status} — {drift.detail} (canary run {report.canary.run_id}, {drift.n_pairs} rated items)",
        first="calibration: ",
    )


@judges_app.command("shadow")
def judges_shadow(
    name: Annotated[str, typer.Argument(help="The judge file, e.g. ev_actionability_v1.")],
    last: Annotated[int, typer.Option("--last", min=1, max=1000, help="How many of blue's newest traces.")] = 50,
    project: ProjectOption = None,
) -> None:
    """Score the judge file as it is now (green) on the last traces its live evaluator (blue) scored and on its
    calibration set (the canary), client-side; nothing is written to Langfuse."""
    from scoregate.app import shadow_judge

    _print_shadow(shadow_judge(project_root(project), name, last=last))


def _print_move(move: JudgeMove) -> None:
    verb = "promoted" if move.action == "promote" else "rolled back"
    done_before = "" if move.recorded or move.rules else "already "
    head = f"{move.judge} ({move.score_key}) {done_before}{verb}"
    rules = f"{len(move.rules)} rule(s) repointed" if move.rules else "no rule left to repoint"
    print_wrapped(
        console,
        f"{head}: the rules run {move.target} instead of {', '.join(move.source) or '—'}; {rules}",
    )
    if move.calibration:
        print_wrapped(console, move.calibration, first="  calibration: ", indent="    ")
    if move.forced:
        print_wrapped(console, "forced past the calibration (the reason is in promotions.jsonl)", style="yellow")
    done = "recorded in promotions.jsonl" if move.recorded else "the move was already in promotions.jsonl"
    print_wrapped(console, done, first="  ")


ReasonOption = Annotated[str | None, typer.Option("--reason", help="Why (with --force; kept in promotions.jsonl).")]


@judges_app.command("promote")
def judges_promote(
    name: Annotated[str, typer.Argument(help="The judge file whose current version (green) goes live.")],
    force: Annotated[bool, typer.Option("--force", help="Promote although the calibration does not hold.")] = False,
    reason: ReasonOption = None,
    project: ProjectOption = None,
) -> None:
    """Point the rules that run a judge at its green evaluator, when its calibration canary holds; audited."""
    from scoregate.app import move_judge

    _print_move(move_judge(project_root(project), name, "promote", force=force, reason=reason))


@judges_app.command("rollback")
def judges_rollback(
    name: Annotated[str, typer.Argument(help="The judge file whose last promotion is undone.")],
    project: ProjectOption = None,
) -> None:
    """Point the rules back at the evaluator the judge's last promotion replaced; audited."""
    from scoregate.app import move_judge

    _print_move(move_judge(project_root(project), name, "rollback"))
