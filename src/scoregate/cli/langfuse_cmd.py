"""`scoregate langfuse check`, `datasets sync`, `prompts sync`, `scores import`: the Langfuse commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.console import escape, lazy_console
from scoregate.cli.options import ProjectOption, project_path, project_root

if TYPE_CHECKING:
    from scoregate.sinks.langfuse.datasets_sync import DatasetSyncReport
    from scoregate.sinks.langfuse.prompts_sync import PromptPlan, PromptSyncReport
    from scoregate.sinks.langfuse.scores_import import ImportReport

if TYPE_CHECKING:
    from scoregate.sinks.langfuse.score_configs import ScoreConfigReport

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

    table = Table(title=f"score configs → {report.host}", title_justify="left")
    for column in ("key", "type", "range / categories", "change"):
        table.add_column(column)
    for plan in report.plans:
        w = plan.wanted
        scale = f"{w.min_value:g}..{w.max_value:g}" if w.min_value is not None and w.max_value is not None else ""
        scale = ", ".join(w.categories) if w.categories else scale
        table.add_row(w.name, w.data_type, scale, plan.action)
    console.print(table)
    verb = "" if report.applied else " (dry run: nothing written)"
    console.print(
        f"{report.count('create')} to create, {report.count('update')} to update, "
        f"{report.count('unchanged')} unchanged, {report.count('conflict')} in conflict{verb}"
    )
    for plan in report.plans:
        if plan.action == "conflict":
            console.print(
                f"[yellow]conflict:[/] {escape(plan.wanted.name)} {escape(plan.problem or '')}; left as it is "
                "(Langfuse cannot change a config's type or scale: rename the key or archive the old config)"
            )
    for skipped in report.skipped:
        console.print(f"[yellow]skipped:[/] {escape(skipped)}")


@langfuse_app.command("setup")
def setup(dry_run: DryRunOption = False, project: ProjectOption = None) -> None:
    """Create or update one Langfuse score config per score key of the evaluator files (idempotent)."""
    from scoregate.catalog.project import load_project
    from scoregate.sinks.langfuse.score_configs import setup_score_configs

    _print_configs(setup_score_configs(load_project(project_root(project)), dry_run=dry_run))


@dashboards_app.command("sync")
def dashboards_sync(
    names: Annotated[list[str] | None, typer.Argument(help="Dashboard files to sync (default: all).")] = None,
    dry_run: DryRunOption = False,
    prune: Annotated[bool, typer.Option("--prune", help="Remove widgets no longer in the file.")] = False,
    project: ProjectOption = None,
) -> None:
    """Create or update each dashboard of dashboards/ and its widgets by name; print the dashboard URL."""
    from rich.table import Table

    from scoregate.catalog.project import load_project
    from scoregate.sinks.langfuse.dashboards_sync import sync_dashboards

    report = sync_dashboards(load_project(project_root(project)), names or [], dry_run=dry_run, prune=prune)
    for plan in report.plans:
        table = Table(title=f"dashboard {plan.name} ({plan.action})", title_justify="left")
        table.add_column("widget")
        table.add_column("change")
        for tile in plan.tiles:
            table.add_row(
                escape(tile.widget), tile.action + (" + moved" if tile.moved and tile.action != "move" else "")
            )
        console.print(table)
        if plan.url:
            console.print(f"  {plan.url}", highlight=False, soft_wrap=True)
        if plan.count("extra"):
            console.print(f"  {plan.count('extra')} widget(s) only in Langfuse; `--prune` removes them")
    writes = sum(plan.writes for plan in report.plans)
    done = f"applied: {writes} writes" if report.applied else f"dry run: nothing written ({writes} writes planned)"
    console.print(done)


@langfuse_app.command("check")
def check(project: ProjectOption = None) -> None:
    """Check that Langfuse is reachable and the keys open a project (-C is accepted; keys come from the env)."""
    from scoregate.sinks.langfuse.check import check_connection

    report = check_connection()
    org = f", organization {report.organization}" if report.organization else ""
    console.print(
        f"[green]Langfuse OK[/]: {escape(report.host)}  project {escape(report.project_name)} "
        f"({report.project_id}{escape(org)})  SDK {report.sdk_version}  {report.latency_ms:.0f} ms",
        highlight=False,
    )


def _print_datasets(report: DatasetSyncReport) -> None:
    from rich.table import Table

    table = Table(title=f"datasets → {report.host} (project {report.project})", title_justify="left")
    for column in ("dataset", "change", "created", "restored", "updated", "unchanged", "archived", "only in Langfuse"):
        table.add_column(column, justify="left" if column in ("dataset", "change") else "right")
    for plan in report.plans:
        counts = [str(plan.count(a)) for a in ("create", "restore", "update", "unchanged", "archive", "extra")]
        table.add_row(plan.name, plan.action, *counts)
    console.print(table)
    writes = sum(plan.writes for plan in report.plans)
    if report.applied:
        console.print(f"applied: {writes} writes, {report.requests} requests, {report.throttled_s:.1f} s throttled")
    else:
        console.print(f"dry run: nothing written ({writes} writes planned)")
    extra = report.total("extra")
    if extra:
        console.print(f"{extra} items exist only in Langfuse; `--prune` archives them (never deletes)")


@datasets_app.command("sync")
def datasets_sync(
    names: Annotated[list[str] | None, typer.Argument(help="Datasets to sync (default: all).")] = None,
    dry_run: DryRunOption = False,
    prune: Annotated[bool, typer.Option("--prune", help="Archive Langfuse items removed locally.")] = False,
    project: ProjectOption = None,
) -> None:
    """Create missing datasets, upsert changed items, archive removed ones (--prune); unchanged items are not sent."""
    from scoregate.catalog.project import load_project
    from scoregate.sinks.langfuse.datasets_sync import sync_datasets

    report = sync_datasets(load_project(project_root(project)), names or [], dry_run=dry_run, prune=prune)
    _print_datasets(report)


def _version_text(plan: PromptPlan, applied: bool) -> str:
    if plan.action == "create":
        if applied:
            return f"v{plan.version} (new)"
        return f"v{(plan.latest_version or 0) + 1} (to create)"
    return f"v{plan.version}"


def _print_prompts(report: PromptSyncReport) -> None:
    from rich.table import Table

    table = Table(title=f"prompts → {report.host} (project {report.project})", title_justify="left")
    for column in ("prompt", "action", "version", "previous latest", "labels"):
        table.add_column(column)
    for plan in report.plans:
        previous = f"v{plan.latest_version}" if plan.latest_version else "—"
        labels = ", ".join(plan.missing_labels if plan.action == "label" else plan.labels) or "—"
        table.add_row(plan.name, plan.action, _version_text(plan, report.applied), previous, labels)
    console.print(table)
    created, labelled = report.count("create"), report.count("label")
    verb = "created" if report.applied else "to create"
    console.print(
        f"{created} versions {verb}, {labelled} relabelled, {report.count('unchanged')} unchanged; "
        f"commit message {report.commit_message or '(not in git)'}"
        + ("" if report.applied else "; dry run: nothing written")
    )
    if report.score_configs:
        console.print(escape(report.score_configs), highlight=False)


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
    from scoregate.catalog.project import load_project
    from scoregate.sinks.langfuse.prompts_sync import sync_prompts

    report = sync_prompts(load_project(project_root(project)), names or [], label=label or [], dry_run=dry_run)
    _print_prompts(report)


def _print_import(report: ImportReport, local_only: bool) -> None:
    keys = ", ".join(f"{k} {n}" for k, n in sorted(report.keys.items()))
    console.print(f"{report.rows} valid rows in {report.file} ({keys})", highlight=False)
    if report.dry_run:
        console.print("dry run: nothing written")
        return
    console.print(
        f"local copy: {report.local_new} new or changed, {report.local_unchanged} unchanged → {report.local_path}",
        highlight=False,
    )
    if local_only:
        console.print("Langfuse: skipped (--local-only)")
    else:
        console.print(f"Langfuse: {report.posted} scores posted to {report.host}", highlight=False)
    for note in report.notes:
        console.print(f"[yellow]langfuse {escape(note)}[/]")
    for message in report.sdk_messages:
        console.print(f"[yellow]langfuse {escape(message)}[/]")


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
    from scoregate.sinks.langfuse.scores_import import import_scores

    report = import_scores(project_root(project), project_path(project, file), local_only=local_only, dry_run=dry_run)
    _print_import(report, local_only)


@annotate_app.command("queue")
def annotate_queue(
    target: Annotated[str, typer.Argument(help="A run id, or a dataset (its newest mirrored run), e.g. gold_v1.")],
    project: ProjectOption = None,
) -> None:
    """Create (once) an annotation queue with the human_* score configs and add the run's traces to rate."""
    from scoregate.sinks.langfuse.annotation import queue_run

    report = queue_run(project_root(project), target)
    state = "created" if report.created else "found"
    console.print(f"annotation queue {escape(report.queue_name)!r} {state}: run {report.run_id}", highlight=False)
    console.print(f"  {report.added} traces added, {report.already} already queued", highlight=False)
    console.print(f"  rate them at {report.url}", highlight=False, soft_wrap=True)
    console.print(f"  then `scoregate scores pull {report.run_id}` brings the ratings back for calibrate")


@scores_app.command("pull")
def scores_pull(
    run_id: Annotated[str, typer.Argument(help="The run whose traces were rated (or its dataset).")],
    project: ProjectOption = None,
) -> None:
    """Bring the human ratings given in Langfuse back into feedback/scores.jsonl (new ones only)."""
    from scoregate.sinks.langfuse.annotation import pull_scores

    report = pull_scores(project_root(project), run_id)
    keys = ", ".join(f"{k} {n}" for k, n in sorted(report.keys.items())) or "none"
    console.print(f"run {report.run_id}: ratings in Langfuse: {keys}", highlight=False)
    console.print(f"{report.new} new, {report.known} already in {report.path}", highlight=False, soft_wrap=True)
