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
from scoregate.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app import RunOutcome

console = lazy_console()
err_console = lazy_console(stderr=True)
REDO_COMMANDS = ("report", "mlflow", "langfuse")
"""What the run's final lines can point to for a failed step: `scoregate report`, `mlflow-sync`, `langfuse-sync`."""


def validate_files_command(project: ProjectOption = None) -> None:
    """Check every dataset, prompt, evaluator and experiment; no model is called."""
    from scoregate.app import check_project

    for status, line in check_project(project_root(project)):
        print_wrapped(console, line, first=f"{status} ", first_style="green" if status == "ok" else "yellow")


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
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Forecast the calls, tokens, cost and wall time; call no model.")
    ] = False,
    budget_usd: Annotated[
        float | None, typer.Option(help="Refuse to start if the forecast may cost more (USD); stop at it.")
    ] = None,
    budget_minutes: Annotated[
        float | None, typer.Option(help="Refuse to start if the forecast may take longer (minutes); stop at it.")
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(help="Run one shard: I/N (0-based) or auto (JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)."),
    ] = None,
    shards: Annotated[
        int | None, typer.Option(min=1, help="With --shard auto: the shard count (else SCOREGATE_SHARDS).")
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="The new run's id (letters, digits, _ - .), e.g. a CI job's; an existing one is refused (resume it "
            "with --resume). With --shard: the id all shards share (default: derived).",
        ),
    ] = None,
    group: Annotated[
        str | None, typer.Option(help="With --shard: a name that sets one sharded run apart, e.g. the CI run id.")
    ] = None,
    stop_early: Annotated[
        bool,
        typer.Option(
            "--stop-early",
            help="Run the items in a seeded order; stop once the first gate's question against --against is settled.",
        ),
    ] = False,
    against: Annotated[str | None, typer.Option(help="With --stop-early: the reference run's id.")] = None,
    max_items: Annotated[
        int | None, typer.Option(min=1, help="With --stop-early: stop, inconclusive, after N paired items.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0, help="With --stop-early: stop, inconclusive, once USD is spent.")
    ] = None,
    stop_batch: Annotated[
        int | None, typer.Option(min=1, help="With --stop-early: items between two looks (default 10).")
    ] = None,
    heartbeat: Annotated[
        float,
        typer.Option(
            min=0.1,
            envvar="SCOREGATE_HEARTBEAT_S",
            help="Without a terminal (CI logs): at most one progress line every N seconds (and the last one), and a "
            "line at least every N seconds while the run waits.",
        ),
    ] = 30.0,
    project: ProjectOption = None,
) -> None:
    """Run an experiment (or resume one), print scores and gates, mirror to MLflow; no name: list experiments."""
    from scoregate.app import RunOptions, check_run_flags, parse_shard, release_collector, run_experiment, run_models

    if (experiment is None and resume is None) or dry_run:  # no run starts: the collector is back on at once
        release_collector()
    if experiment is None and resume is None:
        _list_experiments(project, as_json=as_json)
        return
    human = err_console if as_json else console
    try:
        check_run_flags(
            shard=shard,
            shards=shards,
            models=models.split(",") if models is not None else None,
            run_id=run_id,
            resume=resume,
            dry_run=dry_run,
            no_langfuse=no_langfuse,
            prompt_source=prompt_source,
        )
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
            budget_usd=budget_usd,
            budget_minutes=budget_minutes,
            shard=parse_shard(shard, shards=shards) if shard is not None else None,
            run_id=run_id,
            group=group,
            stop_early=stop_early,
            against=against,
            max_items=max_items,
            max_cost=max_cost,
            stop_batch=stop_batch,
            heartbeat_s=heartbeat,
        )
    except UsageError as exc:  # a contradiction the library found, said as Typer says a bad flag
        raise typer.BadParameter(exc.message, param_hint=exc.option) from exc
    if dry_run:
        from scoregate.app import forecast_experiment
        from scoregate.cli.forecast_render import print_forecast

        planned = forecast_experiment(project_root(project), experiment or "", options)
        if as_json:
            typer.echo(json.dumps(planned.to_dict(), indent=2))
        else:
            print_forecast(console, planned)
        return
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
        mirror_exit(outcomes)
        return
    outcome = run_experiment(project_root(project), experiment or "", options)
    if outcome.nothing_to_do is not None:
        print_wrapped(human, outcome.nothing_to_do)
        for sink, error in outcome.mirror_errors.items():
            print_wrapped(human, f"{sink} mirror failed: {error}", style="yellow")
        return
    if outcome.shard is not None:
        _report_shard(outcome, human, as_json=as_json)
        return
    _report(outcome, project_root(project), human)
    if as_json:
        typer.echo(json.dumps(_outcome_json(outcome), indent=2, default=str))
    if outcome.succeeded_items == 0:
        print_wrapped(human, f"no item of run {outcome.run_id} succeeded", first="error: ", first_style="bold red")
        raise typer.Exit(int(ExitCode.ERROR))
    if fail_on_gates and outcome.verdict != "pass":
        raise typer.Exit(int(ExitCode.GATES_FAILED))
    mirror_exit([outcome])


def _report_shard(outcome: RunOutcome, human: Console, *, as_json: bool) -> None:
    """One shard's end: its items, where they are, how to merge; exit 1 when none succeeded."""
    from scoregate.cli.layout import keep

    metrics = outcome.summary_record.run_metrics
    print_wrapped(
        human,
        f"shard {outcome.shard} of run {outcome.run_id}: {metrics['items']} item(s), {metrics['error_count']} failed",
    )
    print_wrapped(human, keep("stored in", str(outcome.store.directory)))
    print_wrapped(human, f"when every shard is done: `scoregate merge {outcome.run_id}`")
    for note in outcome.mirror_notes:
        print_wrapped(human, note)
    for sink, error in outcome.mirror_errors.items():
        print_wrapped(human, f"{sink} mirror failed: {error} — run this shard again to redo it", style="yellow")
    if as_json:
        typer.echo(json.dumps(_outcome_json(outcome), indent=2, default=str))
    if metrics["items"] and outcome.succeeded_items == 0:
        print_wrapped(human, f"no item of shard {outcome.shard} succeeded", first="error: ", first_style="bold red")
        raise typer.Exit(int(ExitCode.ERROR))
    mirror_exit([outcome])


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
    from scoregate.app import experiment_rows

    rows = experiment_rows(project_root(project))
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
    from scoregate.app import manifest_run_name, score_directions
    from scoregate.cli.layout import keep, keep_name
    from scoregate.cli.render import print_summary

    summary = outcome.summary_record
    print_summary(console, summary, score_directions(root))
    from scoregate.cli.stop_early_render import print_stop_early

    print_stop_early(console, summary, outcome.run_id)
    repeats = summary.section("repeats")
    if repeats is not None:
        from scoregate.cli.repeats_render import print_consistency

        print_consistency(console, repeats)
    name = manifest_run_name(outcome.store.manifest_record)
    print_wrapped(console, f"run {outcome.run_id} ({keep_name(name)})")
    print_wrapped(console, keep("stored in", str(outcome.store.directory)))
    if outcome.failed_items:
        each = " (counting each repeat)" if repeats is not None else ""
        print_wrapped(
            console,
            f"{outcome.failed_items} item(s) failed{each} — retry them with "
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
        fix = outcome.mirror_fixes.get(sink)  # what the sink's own error says to do (a refusal's real fix)
        named = sink in REDO_COMMANDS and (fix is None or redo not in fix)  # a plug-in sink may have no sync command
        again = f" — redo with `{redo}`" if named else ""
        print_wrapped(console, f"{what}: {error}{again}", style="yellow")
        if fix:
            print_wrapped(console, fix, first="  → ", indent="    ", style="yellow")


def mirror_exit(outcomes: list[RunOutcome]) -> None:
    """Exit `MIRROR_REFUSED` (5) when a tracker refused what a run sent; an outage keeps 0 (the sync redoes it)."""
    if any(outcome.mirror_refused for outcome in outcomes):
        raise typer.Exit(int(ExitCode.MIRROR_REFUSED))
