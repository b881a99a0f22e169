"""`scoregate runs list|show`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.console import lazy_console
from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import STATUS_STYLE, print_summary

if TYPE_CHECKING:
    from scoregate.store import RunStore

app = typer.Typer(help="Inspect the local run store (runs/).", no_args_is_help=True)
console = lazy_console()


@app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as a JSON array.")] = False,
    project: ProjectOption = None,
) -> None:
    """List stored runs, newest first."""
    from rich.table import Table

    from scoregate.store import list_runs

    stores = list(list_runs(project_root(project) / "runs"))
    if as_json:
        typer.echo(json.dumps([_run_row(store) for store in stores], indent=2))
        return
    if not stores:
        console.print(
            f"no runs yet in {project_root(project) / 'runs'}; make the first with `scoregate run EXPERIMENT` "
            "(`scoregate run` lists the experiments)",
            highlight=False,
        )
        return
    table = Table()
    for column in ("run id", "experiment", "status", "items", "verdict", "started"):
        table.add_column(column)
    for store in stores:
        manifest, summary = store.manifest, store.summary
        verdict = summary["verdict"] if summary else "—"
        items = str(summary["run_metrics"]["items"]) if summary else "—"
        style = STATUS_STYLE.get(verdict, "white")
        table.add_row(
            store.run_id, manifest["receipts"]["experiment"], manifest["status"], items,
            f"[{style}]{verdict}[/]", manifest["started_at"][:19],
        )  # fmt: skip
    console.print(table)


def _run_row(store: RunStore) -> dict[str, object]:
    manifest, summary = store.manifest, store.summary
    return {
        "run_id": store.run_id,
        "experiment": manifest["receipts"]["experiment"],
        "status": manifest["status"],
        "items": summary["run_metrics"]["items"] if summary else None,
        "verdict": summary["verdict"] if summary else None,
        "started_at": manifest["started_at"],
        "finished_at": manifest.get("finished_at"),
    }


@app.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json.")] = False,
    project: ProjectOption = None,
) -> None:
    """Show a run's scores, gates and receipts."""
    from scoregate.store import RunStore

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
    if summary is None:
        console.print(f"no summary yet: resume with `scoregate run --resume {run_id}`")
        return
    print_summary(console, summary)
