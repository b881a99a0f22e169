"""`scoregate runs list|show`, plus `invalidate` and `watch` from their own modules: the local run store."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from scoregate.cli import invalidate_cmd, watch_cmd
from scoregate.cli.gate_view import print_run_flaky
from scoregate.cli.item_pages import print_item_lines, print_item_table
from scoregate.cli.layout import join_units, keep_name, print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import STATUS_STYLE, print_item_detail, print_summary
from scoregate.errors import ExitCode
from scoregate.support.console import lazy_console

if TYPE_CHECKING:
    from scoregate.app.runs import RunOverview

app = typer.Typer(help="Inspect the local run store (runs/).", no_args_is_help=True)
console = lazy_console()
err_console = lazy_console(stderr=True)


def _write(text: str) -> None:
    """Write to stdout and hand it on at once (the reader sees each page as it is made)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _reader_gone() -> NoReturn:
    """Stop quietly when stdout's reader has gone (`| head` read enough): no traceback, no error line, status 1
    (what rich does for the table, and Python's own advice for a closed pipe)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # what is still buffered for stdout is dropped at exit, not raised
    raise typer.Exit(int(ExitCode.ERROR))


@app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as a JSON array.")] = False,
    project: ProjectOption = None,
) -> None:
    """List stored runs, newest first: model · prompt@version, dataset, items, primary metric, verdict."""
    from scoregate.app import StoredRuns

    root = project_root(project)
    runs = StoredRuns(root).listed()
    if as_json:
        typer.echo(json.dumps([run.to_dict() for run in runs], indent=2))
        return
    if not runs:
        print_wrapped(
            console,
            f"no runs yet in {root / 'runs'}; make the first with `scoregate run EXPERIMENT` "
            "(`scoregate run` lists the experiments)",
        )
        return
    for run in runs:
        o = run.overview
        if o is None:  # one damaged run must not hide the others
            print_wrapped(console, f"{run.run_id}  damaged", style="red")
            print_wrapped(console, str(run.problem), first="  damaged: ", indent="    ")
            continue
        verdict = "invalid" if run.invalid else o.verdict or o.status or "—"
        style = STATUS_STYLE.get(verdict)
        primary = "" if o.primary_metric is None else f"primary {o.primary_metric} {_mean(o.primary_mean)}"
        started = (o.started_at or "")[:16].replace("T", " ")
        status = f"  {o.status}" if o.verdict is not None else ""
        line = f"{verdict.replace('_', ' ')}{status}  {started}"
        print_wrapped(console, line, first=f"{o.run_id}  ", style=style, first_style="bold")
        if o.quarantine and not run.invalid:  # a pass with flaky items kept out is never a plain pass
            print_wrapped(console, f"({o.quarantine})", first="  ", indent="    ", style=style)
        print_wrapped(console, keep_name(o.name), first="  ", indent="    ")
        line = join_units([f"{o.experiment} on {o.dataset}", _items(o), primary])
        print_wrapped(console, line, first="  ", indent="    ")


def _items(o: RunOverview) -> str:
    """`6/6 items`; for a `--limit` run `3 of 6 items (--limit 3)` (or `2/3 items of 6 (--limit 3)` unfinished)."""
    total = "?" if o.items_total is None else str(o.items_total)
    if o.limit is None:
        return f"{o.items_done}/{total} items"
    of = f" of {o.dataset_items}" if o.dataset_items is not None else ""
    if o.items_done == o.items_total:
        return f"{o.items_done}{of} items (--limit {o.limit})"
    return f"{o.items_done}/{total} items{of} (--limit {o.limit})"


def _mean(value: float | None) -> str:
    return "mean —" if value is None else f"mean {value:.3g}"


def mirror_lines(links: dict[str, Any], mlflow_ui: str | None = None) -> list[str]:
    """Say where the run is mirrored: its MLflow run (and the UI page of its runs), its Langfuse experiment."""
    lines = []
    if links.get("mlflow_run_id"):
        lines.append(f"mlflow: run {links['mlflow_run_id']} (experiment {links.get('mlflow_experiment_id')})")
        lines += [f"mlflow: the experiment's runs in the UI: {mlflow_ui}"] if mlflow_ui else []
    if links.get("langfuse_experiment_url") or links.get("langfuse_experiment_id"):
        where = links.get("langfuse_experiment_url") or f"experiment {links['langfuse_experiment_id']}"
        state = "synced" if links.get("langfuse_synced") else "partly synced; `scoregate langfuse-sync` completes it"
        when = f" at {links['langfuse_synced_at']}" if links.get("langfuse_synced_at") else ""
        lines.append(f"langfuse: {where} ({state}{when})")
    return lines


@app.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    items: Annotated[bool, typer.Option("--items", help="Show the items: output excerpt, scores, error.")] = False,
    item: Annotated[str | None, typer.Option("--item", help="Show one item in full.")] = None,
    worst: Annotated[int | None, typer.Option("--worst", min=1, help="Only the K worst items (by --by).")] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="Score for --worst (default: the run's primary metric).")
    ] = None,
    failed: Annotated[bool, typer.Option("--failed", help="Only items whose call or output failed.")] = False,
    gate: Annotated[str | None, typer.Option("--gate", help="Only the items that broke this gate.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (summary.json, or the items asked for).")] = False,
    compact: Annotated[
        bool, typer.Option("--compact", help="One line per item: id, ok or failed, scores, error (implies --items).")
    ] = False,
    flaky: Annotated[
        bool, typer.Option("--flaky", help="Only the flaky items kept out of gates, with history.")
    ] = False,
    project: ProjectOption = None,
) -> None:
    """Show a run's scores, gates and receipts; its items (--items, --worst, --failed, --gate, --flaky); one --item."""
    from scoregate.app import StoredRuns

    root = project_root(project)
    stored = StoredRuns(root)
    if item is not None:
        detail = stored.item(run_id, item)
        if as_json:
            typer.echo(json.dumps(detail, indent=2, default=str))
        else:
            print_item_detail(console, detail)
        return
    view = stored.view(run_id)
    if items or compact or worst is not None or failed or gate is not None or by is not None:
        table = view.item_table(worst=worst, by=by, failed=failed, gate=gate)
        try:
            if as_json:
                table.write_json(_write)  # streamed, a page of rows at a time
            elif compact:
                print_item_lines(table, _write, lambda line: print_wrapped(err_console, line))
            else:
                print_item_table(console, table, view.directions)
        except BrokenPipeError:
            _reader_gone()
        return
    if flaky:
        print_run_flaky(console, view.summary_record)
        return
    if as_json:
        typer.echo(json.dumps(view.summary or {"manifest": view.manifest}, indent=2))  # the files as they are
        return
    summary = view.summary_record
    manifest = view.manifest_record
    receipts = manifest.receipts
    print_wrapped(
        console, join_units([f"run {run_id}", f"status {manifest.status}", f"experiment {receipts.experiment}"])
    )
    prompts = ", ".join(f"{n}@{v}" for n, v in receipts.prompt_versions().items())
    if (model := receipts.model) is not None:
        print_wrapped(console, f"model {model.name} ({model.model} @ {model.endpoint})")
    print_wrapped(console, f"prompts {prompts}")
    limit, dataset = view.limit, receipts.dataset
    total = dataset.items if dataset is not None else None
    limited = f"first {limit} of {total} items (--limit {limit})" if limit is not None else ""
    data = f"dataset {dataset.name} ({str(dataset.content_hash)[:12]})" if dataset is not None else "dataset ?"
    commit = f"commit {(receipts.git_commit() or '—')[:12]}"  # — outside git, as the report says
    print_wrapped(console, join_units([data, limited, commit]))
    for line in mirror_lines(view.links, view.mlflow_ui()):
        print_wrapped(console, line)
    if summary is not None and summary.valid is False:
        better = f"; superseded by {summary.superseded_by}" if summary.superseded_by else ""
        print_wrapped(console, f"{summary.invalid_reason}{better}", first="INVALID: ", first_style="red")
    if summary is None:
        print_wrapped(console, f"no summary yet: resume with `scoregate run --resume {run_id}`")
        return
    print_summary(console, summary, view.directions)
    from scoregate.cli.stop_early_render import print_stop_early

    print_stop_early(console, summary, run_id)


app.command("invalidate")(invalidate_cmd.invalidate)
app.command("watch")(watch_cmd.watch)
