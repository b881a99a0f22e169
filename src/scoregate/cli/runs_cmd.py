"""`scoregate runs list|show`."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import STATUS_STYLE, print_summary
from scoregate.store import RunStore, list_runs

app = typer.Typer(help="Inspect the local run store (runs/).", no_args_is_help=True)
console = Console()


@app.command("list")
def list_command(project: ProjectOption = None) -> None:
    """List stored runs, newest first."""
    table = Table()
    for column in ("run id", "experiment", "status", "items", "verdict", "started"):
        table.add_column(column)
    for store in list_runs(project_root(project) / "runs"):
        manifest, summary = store.manifest, store.summary
        verdict = summary["verdict"] if summary else "—"
        verdict = "invalid" if (store.directory / "invalidation.json").is_file() else verdict
        items = str(summary["run_metrics"]["items"]) if summary else "—"
        style = STATUS_STYLE.get(verdict, "white")
        table.add_row(
            store.run_id, manifest["receipts"]["experiment"], manifest["status"], items,
            f"[{style}]{verdict}[/]", manifest["started_at"][:19],
        )  # fmt: skip
    console.print(table)


@app.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json.")] = False,
    project: ProjectOption = None,
) -> None:
    """Show a run's scores, gates and receipts."""
    store = RunStore.open(project_root(project) / "runs", run_id)
    summary = store.summary
    if as_json:
        typer.echo(json.dumps(summary or {"manifest": store.manifest}, indent=2))
        return
    manifest = store.manifest
    receipts = manifest["receipts"]
    console.print(f"run {run_id}  status {manifest['status']}  experiment {receipts['experiment']}")
    prompts = ", ".join(f"{n}@{p['version']}" for n, p in receipts["prompts"].items())
    console.print(f"prompts {prompts}  model {receipts['model']['model']} @ {receipts['model']['endpoint']}")
    console.print(f"dataset {receipts['dataset']['name']} ({receipts['dataset']['content_hash'][:12]})  "
                  f"commit {str(receipts['git']['commit'])[:12]}  links {store.links}")  # fmt: skip
    if summary is not None and summary.get("valid") is False:
        better = f"; superseded by {summary['superseded_by']}" if summary.get("superseded_by") else ""
        console.print(f"[red]INVALID[/]: {escape(str(summary.get('invalid_reason')))}{better}")
    if summary is None:
        console.print(f"no summary yet: resume with `scoregate run --resume {run_id}`")
        return
    print_summary(console, summary)
