"""`scoregate promote`, `scoregate promotions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.layout import keep, print_table, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import STATUS_STYLE
from scoregate.support.console import escape, lazy_console

if TYPE_CHECKING:
    from scoregate.app.promotion_result import PromotionResult

console = lazy_console()

LabelOption = Annotated[str, typer.Option("--label", help="The label to move.")]


def _print_evidence(result: PromotionResult, *, problems: bool = True) -> None:
    """Per experiment: its run and model, then the verdict, the gates and (unless a refusal lists them) the problem,
    each on its own lines."""
    from scoregate.support.figures import version_name

    title = f"evidence for {version_name(result.prompt, result.version)}"
    if result.action == "rollback":
        title += " (from the promotion that made it the holder)"
    print_wrapped(console, title, style="bold")
    for e in result.evidence:
        run = f"run {e.scoregate_run_id}" if e.scoregate_run_id else "no run"
        model = f", {keep('model', e.model)}" if e.model else ""
        elsewhere = " (not in MLflow)" if e.scoregate_run_id and not e.in_mlflow else ""
        print_wrapped(console, f"{e.experiment}: {run}{model}{elsewhere}")
        if e.verdict is not None:
            verdict = e.verdict.upper() if e.verdict in STATUS_STYLE else e.verdict
            print_wrapped(console, f"verdict: {verdict}", first="  ", indent="    ")
        if e.gates:
            gates = ", ".join(keep(name, status) for name, status in e.gates.items())
            print_wrapped(console, f"gates: {gates}", first="  ", indent="    ")
        if e.skipped and e.passed:  # a problem says it itself
            print_wrapped(console, f"skipped: {e.skipped}", first="  ", indent="    ")
        if e.problem and problems:
            print_wrapped(console, f"problem: {e.problem}", first="  ", indent="    ", style="yellow")
    for check in result.judges:
        gates = ", ".join(check.gates)
        if check.problem is None:
            figures = "within its drift tolerance" if check.figures else "calibrated; no canary since"
            print_wrapped(console, f"judge {check.judge} ({gates}): {figures}")


def _print_result(result: PromotionResult, *, dry_run: bool) -> None:
    from scoregate.support.figures import version_label, version_name

    _print_evidence(result)
    held = version_label(result.previous_version) if result.previous_version is not None else "no version"
    target = version_label(result.version)
    move = f"{result.label!r}: {held} → {target} of {result.prompt}"
    if dry_run and result.action == "promote" and not result.failures:
        passed = ", ".join(e.experiment for e in result.evidence)
        print_wrapped(
            console, f"dry run: every gate passed for {version_name(result.prompt, result.version)} in {passed}"
        )
    if result.unchanged:
        print_wrapped(console, f"nothing to do: {target} of {result.prompt} already holds {result.label!r}")
    elif dry_run:
        print_wrapped(console, f"dry run, would {result.action} {move}" + (" (forced)" if result.forced else ""))
    else:
        forced = " (forced)" if result.forced else ""
        done = "promoted" if result.action == "promote" else "rolled back"
        undoing = f" (undoes the promotion of {result.undoes[:19]})" if result.undoes else ""
        print_wrapped(
            console, f"{move}{forced}{undoing}; recorded in promotions.jsonl", first=f"{done} ", first_style="green"
        )
        if result.mlflow_alias is not None:
            print_wrapped(console, f"MLflow prompt alias {result.label!r} → registry version {result.mlflow_alias}")
    if result.local_note is not None:
        print_wrapped(console, result.local_note, first="note: ", first_style="yellow")
    for warning in result.warnings:
        print_wrapped(console, warning, first="warning: ", first_style="yellow")


def promote_command(
    prompt: Annotated[str, typer.Argument(help="Prompt name (prompts/<name>.yaml).")],
    version: Annotated[
        str | None,
        typer.Option(
            "--version",
            help="Langfuse version to promote (N); without Langfuse a prompt file's local-<hash> (default: the file "
            "as it is now).",
        ),
    ] = None,
    label: LabelOption = "production",
    rollback_: Annotated[
        bool, typer.Option("--rollback", help="Move the label back to the version that held it before.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the gates and show the move; change nothing.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Move a Langfuse label although gates did not pass (needs --reason).")
    ] = False,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (recorded in the audit log).")] = None,
    project: ProjectOption = None,
) -> None:
    """Move a label to a prompt version whose gates passed (or roll it back); audited in promotions.jsonl.

    With Langfuse the label moves there (a Langfuse version, --version N); without it the version is the prompt
    file's and the label is held in promotions.jsonl, where the regression gates read it.
    """
    from scoregate.app import LangfuseCatalog, PromotionRefused, promote, rollback

    if force and not (reason and reason.strip()):
        raise typer.BadParameter("--force needs --reason TEXT", param_hint="--reason")
    root = project_root(project)
    if rollback_:
        if version is not None:
            raise typer.BadParameter("--rollback moves the label back; do not give --version", param_hint="--version")
        result = rollback(root, prompt, label=label, dry_run=dry_run, force=force, reason=reason)
    else:
        if version is None and LangfuseCatalog.configured():
            raise typer.BadParameter("name the version to promote: --version N", param_hint="--version")
        try:
            result = promote(
                root, prompt, version=_version(version), label=label, dry_run=dry_run, force=force, reason=reason
            )
        except PromotionRefused as refused:
            if refused.result is not None:
                _print_evidence(refused.result, problems=False)  # the refusal lists them
            raise
    _print_result(result, dry_run=dry_run)


def _version(text: str | None) -> int | str | None:
    """`--version`: a Langfuse version number, or a prompt file's `local-<hash>` (as runs record it)."""
    if text is None or text.startswith("local-"):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise typer.BadParameter(f"{text!r} is not a version number (N ≥ 1) or local-<hash>", param_hint="--version")


def promotions_command(
    prompt: Annotated[str | None, typer.Argument(help="Only this prompt.")] = None,
    project: ProjectOption = None,
) -> None:
    """List the promotion history (promotions.jsonl), oldest first."""
    from rich.table import Table

    from scoregate.app import promotion_history
    from scoregate.support.figures import version_label

    records = promotion_history(project_root(project), prompt)
    if not records:
        print_wrapped(console, "no promotions recorded")
        return
    table = Table()
    for column in ("time", "action", "prompt", "label", "version", "from", "forced", "user", "reason", "evidence"):
        table.add_column(column)
    for r in records:
        previous = r.get("previous_version")
        runs = ", ".join(e.get("scoregate_run_id") or "—" for e in r.get("evidence", []))
        table.add_row(
            str(r["time"])[:19], r["action"], escape(r["prompt"]), escape(r["label"]), version_label(r["version"]),
            version_label(previous) if previous is not None else "—", "yes" if r.get("forced") else "",
            escape(str(r.get("user", ""))), escape(r.get("reason") or ""), escape(runs),
        )  # fmt: skip
    print_table(console, table)
