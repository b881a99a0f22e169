"""`scoregate validate`, `scoregate run`, `scoregate mlflow-sync`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.cli.console import lazy_console
from scoregate.cli.layout import print_wrapped
from scoregate.cli.options import ProjectOption, project_root
from scoregate.errors import ExitCode

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app.experiment import RunOutcome

console = lazy_console()
err_console = lazy_console(stderr=True)
REDO_COMMANDS = ("report", "mlflow", "langfuse")
"""What the run's final lines can point to for a failed step: `scoregate report`, `mlflow-sync`, `langfuse-sync`."""


def validate_files_command(project: ProjectOption = None) -> None:
    """Check every dataset, prompt, evaluator and experiment; no model is called."""
    from scoregate.app.validation import validate as validate_files
    from scoregate.tracks.project import load_project

    for line in validate_files(load_project(project_root(project))):
        print_wrapped(console, line, first="ok ", first_style="green")


def run(
    experiment: Annotated[str | None, typer.Argument(help="Experiment name from scoregate.yaml.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N items.")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, max=1000, help="Items in flight at once.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name from scoregate.yaml to use instead.")] = None,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="Model name for judges that name none.")
    ] = None,
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
    no_langfuse: Annotated[
        bool, typer.Option("--no-langfuse", help="No Langfuse: local prompt files, no mirror (keys may stay set).")
    ] = False,
    prompt_source: Annotated[
        str,
        typer.Option(help="Where prompts come from: langfuse, local (prompts/*.yaml) or auto (Langfuse if set)."),
    ] = "auto",
    prompt_label: Annotated[
        str | None,
        typer.Option(help="Run the Langfuse prompt version with this label (default: candidate, else production)."),
    ] = None,
    prompt_version: Annotated[int | None, typer.Option(min=1, help="Run this Langfuse prompt version.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the run id and summary as JSON on stdout (the rest on stderr).")
    ] = False,
    eval_rows: Annotated[
        bool, typer.Option("--eval-rows", help="Also write each item as an MLflow evaluation row (~57 ms/item).")
    ] = False,
    no_report: Annotated[
        bool,
        typer.Option("--no-report", help="Do not write runs/<id>/report.html (`scoregate report RUN` can)."),
    ] = False,
    repeat: Annotated[
        int,
        typer.Option(
            min=1, max=100, help="Run each item K times (repeats 2..K bypass the cache) and report consistency."
        ),
    ] = 1,
    project: ProjectOption = None,
) -> None:
    """Run an experiment (or resume one), print scores and gates, mirror to MLflow; no name: list experiments."""
    from scoregate.app.experiment import RunOptions, run_experiment, run_models

    if experiment is None and resume is None:
        _list_experiments(project, as_json=as_json)
        return
    if (retry_errors or quarantine) and resume is None:
        raise typer.BadParameter("--retry-errors and --quarantine work on a stored run: add --resume RUN_ID")
    if no_langfuse and prompt_source == "langfuse":
        raise typer.BadParameter("--no-langfuse runs without Langfuse; drop it or --prompt-source langfuse")
    human = err_console if as_json else console
    options = RunOptions(
        limit=limit,
        concurrency=concurrency,
        model=model,
        judge_model=judge_model,
        model_from=_model_from(model),
        use_cache=not no_cache,
        resume=resume,
        mirror_mlflow=not no_mlflow,
        mirror_langfuse=not no_langfuse,
        prompt_label=prompt_label,
        prompt_version=prompt_version,
        retry_errors=retry_errors,
        quarantine=quarantine,
        prompt_source="local" if no_langfuse and prompt_source == "auto" else prompt_source,
        eval_rows=eval_rows,
        write_report=not no_report,
        repeat=repeat,
    )
    if models is not None:
        names = _model_names(models)
        outcomes = run_models(project_root(project), experiment or "", names, options)
        for outcome in outcomes:
            _report(outcome, project_root(project), human)
        ids = " ".join(o.run_id for o in outcomes)
        print_wrapped(human, f"ranked: `scoregate rank {ids}`; on one page: `scoregate report {ids}`")
        if as_json:
            typer.echo(json.dumps([_outcome_json(o) for o in outcomes], indent=2, default=str))
        if any(o.succeeded_items == 0 for o in outcomes):
            empty = ", ".join(o.run_id for o in outcomes if o.succeeded_items == 0)
            print_wrapped(human, f"no item succeeded in {empty}", first="error: ", first_style="bold red")
            raise typer.Exit(int(ExitCode.ERROR))
        if fail_on_gates and any(o.verdict != "pass" for o in outcomes):
            raise typer.Exit(int(ExitCode.GATES_FAILED))
        return
    outcome = run_experiment(project_root(project), experiment or "", options)
    if outcome.nothing_to_do is not None:
        print_wrapped(human, outcome.nothing_to_do)
        for sink, error in outcome.mirror_errors.items():
            print_wrapped(human, f"{sink} mirror failed: {error}", style="yellow")
        return
    _report(outcome, project_root(project), human)
    if as_json:
        typer.echo(json.dumps(_outcome_json(outcome), indent=2, default=str))
    if outcome.succeeded_items == 0:
        print_wrapped(human, f"no item of run {outcome.run_id} succeeded", first="error: ", first_style="bold red")
        raise typer.Exit(int(ExitCode.ERROR))
    if fail_on_gates and outcome.verdict != "pass":
        raise typer.Exit(int(ExitCode.GATES_FAILED))


def _outcome_json(outcome: RunOutcome) -> dict[str, object]:
    """The machine-readable result of one run: its id, where it is stored, verdict, summary and mirrors."""
    return {
        "run_id": outcome.run_id,
        "directory": str(outcome.store.directory),
        "verdict": outcome.verdict,
        "mirrors": outcome.mirrors,
        "mirror_errors": outcome.mirror_errors,
        "summary": outcome.summary,
    }


def _model_from(model: str | None) -> str:
    """`SCOREGATE_MODEL` when `make experiment` passed that variable's value as --model, else `--model`."""
    return "SCOREGATE_MODEL" if model is not None and os.environ.get("SCOREGATE_MODEL") == model else "--model"


def _model_names(models: str) -> list[str]:
    """The names of `--models a,b,c`: at least one, each once."""
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        raise typer.BadParameter("name at least one model, e.g. --models local,gpt-4o-mini", param_hint="--models")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise typer.BadParameter(
            f"{', '.join(twice)} named more than once; name each model once", param_hint="--models"
        )
    return names


def _list_experiments(project: ProjectOption, *, as_json: bool) -> None:
    """Print the experiments of scoregate.yaml (what `scoregate run NAME` accepts)."""
    from scoregate.catalog.routing import route_prompts
    from scoregate.tracks.project import load_project

    config = load_project(project_root(project)).config
    datasets_of = {gate.name: gate.datasets for gate in config.gates}
    rows = [
        {
            "name": name,
            "dataset": spec.dataset,
            "prompts": route_prompts(spec.prompt),
            "model": spec.model or config.settings.model,
            "evaluators": list(spec.evaluators),
            "gates": [g for g in spec.gates if datasets_of.get(g) is None or spec.dataset in (datasets_of[g] or [])],
        }
        for name, spec in config.experiments.items()
    ]  # a gate limited to other datasets does not judge this experiment's runs
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from scoregate.cli.layout import keep

    print_wrapped(console, "experiments in scoregate.yaml (run one with `scoregate run NAME`):")
    for row in rows:
        prompts = ", ".join(row["prompts"])
        fields = [f"{row['name']}:", keep("dataset", f"{row['dataset']},"),
                  keep("prompt" + ("s" if len(row["prompts"]) > 1 else ""), "") + prompts + ",",
                  keep("model", f"{row['model']},"), keep(counted(len(row["evaluators"]), "evaluator") + ","),
                  keep(counted(len(row["gates"]), "gate"))]  # fmt: skip
        print_wrapped(console, " ".join(fields), first="  ", indent="    ")


def counted(n: int, noun: str) -> str:
    """Return `1 gate`, `2 gates`, `0 gates`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _report(outcome: RunOutcome, root: Path, console: Console = console) -> None:
    from scoregate.catalog.directions import project_directions
    from scoregate.cli.layout import keep, keep_name
    from scoregate.cli.render import print_summary
    from scoregate.store.identity import manifest_run_name
    from scoregate.tracks.project import load_project

    print_summary(console, outcome.summary, project_directions(load_project(root)))
    if "repeats" in outcome.summary:
        from scoregate.cli.repeats_render import print_consistency

        print_consistency(console, outcome.summary["repeats"])
    name = manifest_run_name(outcome.store.manifest)
    print_wrapped(console, f"run {outcome.run_id} ({keep_name(name)})")
    print_wrapped(console, keep("stored in", str(outcome.store.directory)))
    if outcome.failed_items:
        repeats = " (counting each repeat)" if "repeats" in outcome.summary else ""
        print_wrapped(
            console,
            f"{outcome.failed_items} item(s) failed{repeats} — retry them with "
            f"`scoregate run --resume {outcome.run_id} --retry-errors`",
            style="yellow",
        )
    null_scores, items = outcome.call_failed_scores
    if items:
        print_wrapped(
            console,
            f"{counted(null_scores, 'score')} null in {counted(items, 'item')} where a judge or stage call failed — "
            f"redo them with `scoregate run --resume {outcome.run_id} --retry-errors`",
            style="yellow",
        )
    if outcome.report is not None:
        print_wrapped(console, keep("report:", str(outcome.report)))
    for note in outcome.mirror_notes:  # each sink's lines: MLflow's run, Langfuse's experiment...
        print_wrapped(console, note)
    for sink, error in outcome.mirror_errors.items():
        redo = f"scoregate report {outcome.run_id}" if sink == "report" else f"scoregate {sink}-sync {outcome.run_id}"
        what = "report not written" if sink == "report" else f"{sink} mirror failed"
        again = f" — redo with `{redo}`" if sink in REDO_COMMANDS else ""  # a plug-in sink may have no sync command
        print_wrapped(console, f"{what}: {error}{again}", style="yellow")


def mlflow_sync(
    run_id: Annotated[str, typer.Argument(help="Run id from `scoregate runs list`.")],
    eval_rows: Annotated[
        bool, typer.Option("--eval-rows", help="Also write each item as an MLflow evaluation row (~57 ms/item).")
    ] = False,
    project: ProjectOption = None,
) -> None:
    """Mirror a stored run to MLflow again; updates the same MLflow run, never a duplicate."""
    from scoregate.app.mirror_sync import sync_stored_run

    outcome = sync_stored_run(project_root(project), run_id, "mlflow", item_rows=eval_rows)
    mlflow = outcome.results["mlflow"]
    if mlflow.report.link:
        print_wrapped(console, f"mlflow: run {mlflow.report.link} is up to date with {run_id}")
    outcome.raise_for("mlflow")
    rows, mlflow_run = mlflow.report.item_rows, mlflow.report.link
    if rows is not None:
        print_wrapped(console, f"mlflow: {rows} evaluation rows (one per item) on run {mlflow_run}")
    for note in outcome.notes:
        print_wrapped(console, note, style="yellow")


def rank(
    run_ids: Annotated[list[str], typer.Argument(help="Two or more runs of the same dataset (e.g. one per model).")],
    metric: Annotated[
        str | None, typer.Option(help="The score to rank by (default: the experiment's primary metric).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ranking as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Rank runs: paired tests, win-rate matrix, Pareto fronts (accuracy vs latency and cost), best by metric."""
    from scoregate.app.ranking import rank_stored_runs

    ranking = rank_stored_runs(project_root(project), run_ids, metric=metric)
    if as_json:
        typer.echo(json.dumps(ranking.to_dict(), indent=2))
    else:
        from scoregate.cli.render import print_ranking

        print_ranking(console, ranking)
