"""`scoregate judges plan` / `apply`: judge files as Langfuse evaluators, a changed judge as a new (green) one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_table, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.support.console import escape, lazy_console

if TYPE_CHECKING:
    from scoregate.app import JudgeSyncReport

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
                "scores nothing live until a rule points at it",
                first="  ",
            )
        for note in plan.notes:
            print_wrapped(console, _whole(f"{plan.file}: {note}"), first="  ", indent="    ")
    counts = (
        f"{report.count('create')} new, {report.count('green')} green, {report.count('describe')} described, "
        f"{report.count('unchanged')} unchanged, {report.count('skip')} local only"
    )
    _print_rules(report)
    writes = f"{report.writes} write{'' if report.writes == 1 else 's'}"
    if report.applied:
        print_wrapped(console, f"applied: {writes}, {report.requests} requests; {counts}")
    else:
        print_wrapped(console, f"plan: {writes} to make ({counts}); nothing written")


def _whole(text: str) -> str:
    """`text` with each `code span` and option kept on one line."""
    return re.sub(r"`[^`]+`|--force --reason TEXT", lambda m: keep(m.group(0)), text)


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
        change += "" if rule.enabled else " (disabled)"
        traffic = f"{'≥' if rule.capped else ''}{rule.traces_per_day or 0:.1f}"
        calls = str(rule.cost.calls) if rule.cost is not None else "—"
        cost = rule.cost.cost_usd if rule.cost is not None else None
        usd = f"{_usd(cost.expected)} ({_usd(cost.low)} to {_usd(cost.high)})" if cost else "unknown (no price)"
        table.add_row(escape(rule.name), escape(change), f"{rule.sampling:g}", traffic, calls, usd)
    print_table(console, table)
    for rule in report.rules:
        judges = ", ".join(f"{j} → {e or 'the evaluator to create'}" for j, e in rule.assignments.items())
        print_wrapped(console, f"{rule.name}: {judges}", first="  ", indent="    ")
    for problem in report.over_budget:
        print_wrapped(
            console, _whole(f"{problem}; pass --force --reason TEXT to enable it"), first="apply will refuse: "
        )
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
