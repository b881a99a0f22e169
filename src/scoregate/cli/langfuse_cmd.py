"""`scoregate langfuse check`, `datasets sync`, `prompts sync`, `scores import`: the Langfuse commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.label_options import HumanKeyOption, JudgeKeyOption, PassAtOption
from scoregate.cli.layout import print_table, print_wrapped
from scoregate.cli.options import ProjectOption, project_path, project_root
from scoregate.support.console import escape, lazy_console

if TYPE_CHECKING:
    from scoregate.app.langfuse_catalog import DatasetSyncReport, PromptPlan, PromptSyncReport, ScoreConfigReport
    from scoregate.app.scores_import import ImportReport

langfuse_app = typer.Typer(
    help="The Langfuse connection (LANGFUSE_PUBLIC_KEY, _SECRET_KEY, _HOST).", no_args_is_help=True
)
datasets_app = typer.Typer(help="Datasets in Langfuse: sync datasets/ as plan and apply.", no_args_is_help=True)
prompts_app = typer.Typer(help="Prompts in Langfuse: a version per real change.", no_args_is_help=True)
annotate_app = typer.Typer(help="Human rating in Langfuse's annotation queues.", no_args_is_help=True)
dashboards_app = typer.Typer(help="Langfuse dashboards from dashboards/*.yaml.", no_args_is_help=True)
scores_app = typer.Typer(help="Human ratings and online feedback as Langfuse scores.", no_args_is_help=True)
console = lazy_console()

DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Show the plan; write nothing.")]


def _print_configs(report: ScoreConfigReport) -> None:
    from rich.table import Table

    table = Table(title=escape(f"score configs → {report.host}"), title_justify="left")
    for column in ("key", "type", "range / categories", "change"):
        table.add_column(column)
    for plan in report.plans:
        w = plan.wanted
        scale = f"{w.min_value:g}..{w.max_value:g}" if w.min_value is not None and w.max_value is not None else ""
        scale = ", ".join(w.categories) if w.categories else scale
        table.add_row(escape(w.name), w.data_type, escape(scale), plan.action)
    print_table(console, table)
    verb = "" if report.applied else " (dry run: nothing written)"
    print_wrapped(
        console,
        f"{report.count('create')} to create, {report.count('update')} to update, "
        f"{report.count('unchanged')} unchanged, {report.count('conflict')} in conflict{verb}",
    )
    for plan in report.plans:
        if plan.action == "conflict":
            print_wrapped(
                console,
                f"{plan.wanted.name} {plan.problem or ''}; left as it is "
                "(Langfuse cannot change a config's type or scale: rename the key or archive the old config)",
                first="conflict: ",
                first_style="yellow",
            )
    for skipped in report.skipped:
        print_wrapped(console, skipped, first="skipped: ", first_style="yellow")


@langfuse_app.command("setup")
def setup(dry_run: DryRunOption = False, project: ProjectOption = None) -> None:
    """Create or update one Langfuse score config per score key of the evaluator files (idempotent)."""
    from scoregate.app import LangfuseCatalog

    _print_configs(LangfuseCatalog(project_root(project)).sync_score_configs(dry_run=dry_run))


@dashboards_app.command("sync")
def dashboards_sync(
    names: Annotated[list[str] | None, typer.Argument(help="Dashboard files to sync (default: all).")] = None,
    dry_run: DryRunOption = False,
    prune: Annotated[bool, typer.Option("--prune", help="Remove widgets no longer in the file.")] = False,
    project: ProjectOption = None,
) -> None:
    """Create or update each dashboard of dashboards/ and its widgets by name; print the dashboard URL."""
    from rich.table import Table

    from scoregate.app import LangfuseCatalog

    report = LangfuseCatalog(project_root(project)).sync_dashboards(names or [], dry_run=dry_run, prune=prune)
    for plan in report.plans:
        table = Table(title=escape(f"dashboard {plan.name} ({plan.action})"), title_justify="left")
        table.add_column("widget")
        table.add_column("change")
        for tile in plan.tiles:
            table.add_row(
                escape(tile.widget), tile.action + (" + moved" if tile.moved and tile.action != "move" else "")
            )
        print_table(console, table)
        if plan.url:
            print_wrapped(console, plan.url, first="  ")
        if plan.count("extra"):
            print_wrapped(
                console, f"{plan.count('extra')} widget(s) only in Langfuse; `--prune` removes them", first="  "
            )
    writes = sum(plan.writes for plan in report.plans)
    done = f"applied: {writes} writes" if report.applied else f"dry run: nothing written ({writes} writes planned)"
    print_wrapped(console, done)


@langfuse_app.command("check")
def langfuse_check_command(project: ProjectOption = None) -> None:
    """Check that Langfuse is reachable, the keys open a project, and which server version answers (how scores
    are sent to it); -C is accepted, keys come from the env."""
    from scoregate.app import check_connection

    report = check_connection()
    org = f", organization {report.organization}" if report.organization else ""
    print_wrapped(
        console,
        f"{report.host}  project {report.project_name} ({report.project_id}{org})  SDK {report.sdk_version}  "
        f"{report.latency_ms:.0f} ms",
        first="Langfuse OK: ",
        first_style="green",
    )
    for line in report.server.plan():
        print_wrapped(console, line, first="  ", indent="    ")


def _print_datasets(report: DatasetSyncReport) -> None:
    from rich.table import Table

    table = Table(title=escape(f"datasets → {report.host} (project {report.project})"), title_justify="left")
    for column in ("dataset", "change", "created", "restored", "updated", "unchanged", "archived", "only in Langfuse"):
        table.add_column(column, justify="left" if column in ("dataset", "change") else "right")
    for plan in report.plans:
        counts = [str(plan.count(a)) for a in ("create", "restore", "update", "unchanged", "archive", "extra")]
        table.add_row(escape(plan.name), plan.action, *counts)
    print_table(console, table)
    writes = sum(plan.writes for plan in report.plans)
    if report.applied:
        print_wrapped(
            console,
            f"applied: {writes} writes, {report.requests} requests, {report.throttled_s:.1f} s throttled: "
            f"{report.pace()}",
        )
    else:
        print_wrapped(console, f"dry run: nothing written ({writes} writes planned)")
    extra = report.total("extra")
    if extra:
        print_wrapped(console, f"{extra} items exist only in Langfuse; `--prune` archives them (never deletes)")


@datasets_app.command("sync")
def datasets_sync(
    names: Annotated[list[str] | None, typer.Argument(help="Datasets to sync (default: all).")] = None,
    dry_run: DryRunOption = False,
    prune: Annotated[bool, typer.Option("--prune", help="Archive Langfuse items removed locally.")] = False,
    project: ProjectOption = None,
) -> None:
    """Create missing datasets, upsert changed items, archive removed ones (--prune); unchanged items are not sent."""
    from scoregate.app import LangfuseCatalog

    report = LangfuseCatalog(project_root(project)).sync_datasets(names or [], dry_run=dry_run, prune=prune)
    _print_datasets(report)


def _version_text(plan: PromptPlan, applied: bool) -> str:
    if plan.action == "create":
        if applied:
            return f"v{plan.version} (new)"
        return f"v{(plan.latest_version or 0) + 1} (to create)"
    return f"v{plan.version}"


def _print_prompts(report: PromptSyncReport) -> None:
    from rich.table import Table

    table = Table(title=escape(f"prompts → {report.host} (project {report.project})"), title_justify="left")
    for column in ("prompt", "action", "version", "previous latest", "labels"):
        table.add_column(column)
    for plan in report.plans:
        previous = f"v{plan.latest_version}" if plan.latest_version else "—"
        labels = ", ".join(plan.missing_labels if plan.action == "label" else plan.labels) or "—"
        table.add_row(escape(plan.name), plan.action, _version_text(plan, report.applied), previous, escape(labels))
    print_table(console, table)
    created, labelled = report.count("create"), report.count("label")
    verb = "created" if report.applied else "to create"
    print_wrapped(
        console,
        f"{created} versions {verb}, {labelled} relabelled, {report.count('unchanged')} unchanged; "
        f"commit message {report.commit_message or '(not in git)'}"
        + ("" if report.applied else "; dry run: nothing written"),
    )
    if report.score_configs:
        print_wrapped(console, report.score_configs)


@prompts_app.command("sync")
def prompts_sync(
    names: Annotated[list[str] | None, typer.Argument(help="Prompts to sync (default: all).")] = None,
    label: Annotated[
        list[str] | None, typer.Option("--label", help="Label to add to the synced version, e.g. candidate.")
    ] = None,
    dry_run: DryRunOption = False,
    project: ProjectOption = None,
) -> None:
    """Create a Langfuse version for each changed prompt (never labelled production); print version numbers."""
    from scoregate.app import LangfuseCatalog

    report = LangfuseCatalog(project_root(project)).sync_prompts(names or [], label=label or [], dry_run=dry_run)
    _print_prompts(report)


def _print_import(report: ImportReport, local_only: bool) -> None:
    keys = ", ".join(f"{k} {n}" for k, n in sorted(report.keys.items()))
    print_wrapped(console, f"{report.rows} valid rows in {report.file} ({keys})")
    if report.dry_run:
        print_wrapped(console, "dry run: nothing written")
        return
    print_wrapped(
        console,
        f"local copy: {report.local_new} new or changed, {report.local_unchanged} unchanged → {report.local_path}",
    )
    if local_only:
        print_wrapped(console, "Langfuse: skipped (--local-only)")
    else:
        print_wrapped(
            console, f"Langfuse: {report.posted} scores posted to {report.host}, {report.already} unchanged, "
            "already in Langfuse",
        )  # fmt: skip
    for note in report.notes:
        print_wrapped(console, f"langfuse {note}", style="yellow")


@scores_app.command("import")
def scores_import(
    file: Annotated[Path, typer.Argument(help="CSV or JSONL: trace_id (or run_id + item_id), key, value, comment.")],
    local_only: Annotated[
        bool, typer.Option("--local-only", help="Keep the ratings in feedback/ without posting to Langfuse.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate the file only.")] = False,
    project: ProjectOption = None,
) -> None:
    """Validate ratings or feedback, keep them in feedback/scores.jsonl and post them as Langfuse scores."""
    from scoregate.app import import_scores

    report = import_scores(project_root(project), project_path(project, file), local_only=local_only, dry_run=dry_run)
    _print_import(report, local_only)


@annotate_app.command("queue")
def annotate_queue(
    target: Annotated[str, typer.Argument(help="A run id, or a dataset (its newest mirrored run), e.g. gold_v1.")],
    escalated: Annotated[
        str | None,
        typer.Option("--escalated", help="Only the items this cascade judge sent to its strong judge."),
    ] = None,
    labels: Annotated[
        int | None, typer.Option("--labels", help="Only the N items `scoregate plan --labels N` chooses.")
    ] = None,
    judge_key: JudgeKeyOption = None,
    human_key: HumanKeyOption = None,
    pass_at: PassAtOption = None,
    project: ProjectOption = None,
) -> None:
    """Create (once) an annotation queue with the human_* score configs and add the run's traces to rate."""
    from scoregate.app import LabelRequest, queue_run

    request = None if labels is None else LabelRequest(labels, judge_key or "", human_key or "", pass_at)
    report = queue_run(project_root(project), target, escalated=escalated, labels=request)
    state = "created" if report.created else "found"
    print_wrapped(console, f"annotation queue {report.queue_name!r} {state}: run {report.run_id}")
    if report.escalated:
        print_wrapped(console, f"only the items the cascade judge {report.escalated} escalated", first="  ")
    if report.planned:
        print_wrapped(console, "only the items the label plan chose", first="  ")
    print_wrapped(console, f"{report.added} traces added, {report.already} already queued", first="  ")
    print_wrapped(console, f"rate them at {report.url}", first="  ")
    print_wrapped(
        console, f"then `scoregate scores pull {report.run_id}` brings the ratings back for calibrate", first="  "
    )


@scores_app.command("pull")
def scores_pull(
    run_id: Annotated[str, typer.Argument(help="The run whose traces were rated (or its dataset).")],
    project: ProjectOption = None,
) -> None:
    """Bring the human ratings given in Langfuse back into feedback/scores.jsonl (new ones only)."""
    from scoregate.app import pull_scores

    report = pull_scores(project_root(project), run_id)
    keys = ", ".join(f"{k} {n}" for k, n in sorted(report.keys.items())) or "none"
    print_wrapped(console, f"run {report.run_id}: ratings in Langfuse: {keys}")
    print_wrapped(console, f"{report.new} new, {report.known} already in {report.path}")
    live = report.live
    if live is not None and live.versions:
        versions = ", ".join(f"{label} ×{count}" for label, count in sorted(live.versions.items()))
        print_wrapped(console, f"live judges' scores: {live.new} new, {live.known} already in {live.path}")
        print_wrapped(console, versions, first="  by evaluator version: ", indent="    ")
