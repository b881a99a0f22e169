"""`scoregate validate`, `scoregate run`, `scoregate mlflow-sync`."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from scoregate.analysis.model_ranking import rank_stored_runs
from scoregate.catalog.plan import validate_project
from scoregate.catalog.project import load_project
from scoregate.cli.options import ProjectOption, project_root
from scoregate.cli.render import print_summary
from scoregate.errors import ExitCode
from scoregate.experiment import RunOptions, RunOutcome, run_experiment, run_models
from scoregate.sinks.mlflow_sink import resync_run

console = Console()


def validate(project: ProjectOption = None) -> None:
    """Check every dataset, prompt, evaluator and experiment; no model is called."""
    for line in validate_project(load_project(project_root(project))):
        console.print(f"[green]ok[/] {line}")


def run(
    experiment: Annotated[str | None, typer.Argument(help="Experiment name from scoregate.yaml.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N items.")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Items in flight at once.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name from scoregate.yaml to use instead.")] = None,
    models: Annotated[
        str | None, typer.Option(help="Comma-separated model names: one run per model on the same items.")
    ] = None,
    resume: Annotated[str | None, typer.Option(help="Resume an interrupted run by its id.")] = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="With --resume: run the items that failed again (newest wins).")
    ] = False,
    quarantine: Annotated[
        bool,
        typer.Option(
            "--quarantine", help="With --resume: move damaged lines of results.jsonl aside (kept) and redo their items."
        ),
    ] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    fail_on_gates: Annotated[
        bool, typer.Option("--fail-on-gates", help="Exit with code 3 unless every gate passes.")
    ] = False,
    no_mlflow: Annotated[bool, typer.Option("--no-mlflow", help="Do not mirror the run to MLflow.")] = False,
    no_langfuse: Annotated[bool, typer.Option("--no-langfuse", help="Do not mirror the run to Langfuse.")] = False,
    prompt_label: Annotated[
        str | None,
        typer.Option(help="Run the Langfuse prompt version with this label (default: candidate, else production)."),
    ] = None,
    prompt_version: Annotated[int | None, typer.Option(min=1, help="Run this Langfuse prompt version.")] = None,
    project: ProjectOption = None,
) -> None:
    """Run an experiment (or resume one), print scores and gates, mirror to MLflow."""
    if experiment is None and resume is None:
        raise typer.BadParameter("name an EXPERIMENT, or pass --resume RUN_ID")
    if (retry_errors or quarantine) and resume is None:
        raise typer.BadParameter("--retry-errors and --quarantine work on a stored run: add --resume RUN_ID")
    options = RunOptions(
        limit=limit,
        concurrency=concurrency,
        model=model,
        use_cache=not no_cache,
        resume=resume,
        mirror_mlflow=not no_mlflow,
        mirror_langfuse=not no_langfuse,
        prompt_label=prompt_label,
        prompt_version=prompt_version,
        retry_errors=retry_errors,
        quarantine=quarantine,
    )
    if models:
        names = [m.strip() for m in models.split(",") if m.strip()]
        outcomes = run_models(project_root(project), experiment or "", names, options)
        for outcome in outcomes:
            _report(outcome)
        if any(o.succeeded_items == 0 for o in outcomes):
            empty = ", ".join(o.run_id for o in outcomes if o.succeeded_items == 0)
            console.print(f"[bold red]error:[/] no item succeeded in {empty}", highlight=False)
            raise typer.Exit(int(ExitCode.ERROR))
        console.print(f"ranked: `scoregate rank {' '.join(o.run_id for o in outcomes)}`", soft_wrap=True)
        if fail_on_gates and any(o.verdict != "pass" for o in outcomes):
            raise typer.Exit(int(ExitCode.GATES_FAILED))
        return
    outcome = run_experiment(project_root(project), experiment or "", options)
    if outcome.nothing_to_do is not None:
        console.print(escape(outcome.nothing_to_do), soft_wrap=True, highlight=False)
        for sink, error in outcome.mirror_errors.items():
            console.print(f"[yellow]{sink} mirror failed: {escape(error)}[/]", soft_wrap=True)
        return
    _report(outcome)
    if outcome.succeeded_items == 0:
        console.print(f"[bold red]error:[/] no item of run {outcome.run_id} succeeded", highlight=False)
        raise typer.Exit(int(ExitCode.ERROR))
    if fail_on_gates and outcome.verdict != "pass":
        raise typer.Exit(int(ExitCode.GATES_FAILED))


def _report(outcome: RunOutcome) -> None:
    print_summary(console, outcome.summary)
    console.print(f"run {outcome.run_id} stored in {outcome.store.directory}", soft_wrap=True)
    if outcome.failed_items:
        console.print(
            f"[yellow]{outcome.failed_items} item(s) failed[/] — retry them with "
            f"`scoregate run --resume {outcome.run_id} --retry-errors`",
            soft_wrap=True,
            highlight=False,
        )
    if "mlflow" in outcome.mirrors:
        console.print(f"mlflow: run {outcome.mirrors['mlflow']}  (browse with `make mlflow-ui`)")
    for note in outcome.mirror_notes:
        console.print(escape(note), highlight=False)
    for sink, error in outcome.mirror_errors.items():
        console.print(
            f"[yellow]{sink} mirror failed: {escape(error)}[/] — redo with `scoregate {sink}-sync {outcome.run_id}`"
        )


def mlflow_sync(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    project: ProjectOption = None,
) -> None:
    """Mirror a stored run to MLflow again; updates the same MLflow run, never a duplicate."""
    mlflow_run = resync_run(project_root(project), run_id)
    console.print(f"mlflow: run {mlflow_run} is up to date with {run_id}")


def rank(
    run_ids: Annotated[list[str], typer.Argument(help="Two or more runs of the same dataset (e.g. one per model).")],
    metric: Annotated[str, typer.Option(help="The score to rank by.")] = "eqs",
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranking as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Rank runs: paired tests, win-rate matrix, Pareto fronts (accuracy vs latency and cost), best by metric."""
    ranking = rank_stored_runs(project_root(project), run_ids, metric=metric)
    typer.echo(json.dumps(ranking.to_dict(), indent=2) if as_json else ranking.to_markdown())
