"""`scoregate validate`, `scoregate run`, `scoregate mlflow-sync`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scoregate.cli import run_flags
from scoregate.cli.layout import print_wrapped
from scoregate.cli.mirror_flags import NoMirrorOption, mirrors_off
from scoregate.cli.options import ProjectOption, project_root
from scoregate.errors import ExitCode
from scoregate.support.console import lazy_console

if TYPE_CHECKING:
    from rich.console import Console

    from scoregate.app import RunOptions
    from scoregate.app.run.run_options import RunOutcome

console = lazy_console()
err_console = lazy_console(stderr=True)


def validate_files_command(project: ProjectOption = None) -> None:
    """Check every dataset, prompt, evaluator and experiment; no model is called."""
    from scoregate.app import ProjectOverview

    for status, line in ProjectOverview(project_root(project)).check():
        print_wrapped(console, line, first=f"{status} ", first_style="green" if status == "ok" else "yellow")


def run(
    experiment: run_flags.ExperimentArgument = None,
    limit: run_flags.Limit = None,
    concurrency: run_flags.Concurrency = None,
    model: run_flags.Model = None,
    judge_model: run_flags.JudgeModel = None,
    models: run_flags.Models = None,
    resume: run_flags.Resume = None,
    retry_errors: run_flags.RetryErrors = False,
    quarantine: run_flags.Quarantine = False,
    no_cache: run_flags.NoCache = False,
    fail_on_gates: run_flags.FailOnGates = False,
    no_mirror: NoMirrorOption = None,
    no_mlflow: run_flags.NoMlflow = False,
    no_langfuse: run_flags.NoLangfuse = False,
    prompt_source: run_flags.PromptSource = "auto",
    prompt_label: run_flags.PromptLabel = None,
    prompt_version: run_flags.PromptVersion = None,
    as_json: run_flags.AsJson = False,
    eval_rows: run_flags.EvalRows = False,
    no_report: run_flags.NoReport = False,
    repeat: run_flags.Repeat = 1,
    dry_run: run_flags.DryRun = False,
    budget_usd: run_flags.BudgetUsd = None,
    budget_minutes: run_flags.BudgetMinutes = None,
    shard: run_flags.Shard = None,
    shards: run_flags.Shards = None,
    run_id: run_flags.RunId = None,
    group: run_flags.Group = None,
    stop_early: run_flags.StopEarly = False,
    against: run_flags.Against = None,
    max_items: run_flags.MaxItems = None,
    max_cost: run_flags.MaxCost = None,
    stop_batch: run_flags.StopBatch = None,
    heartbeat: run_flags.Heartbeat = 30.0,
    markdown: run_flags.Markdown = None,
    project: ProjectOption = None,
) -> None:
    """Run an experiment (or resume one), print scores and gates, mirror to MLflow; no name: list experiments."""
    from scoregate.app import RunOptions as Options
    from scoregate.app import check_run_flags, parse_shard
    from scoregate.support.start_gc import release_collector

    if (experiment is None and resume is None) or dry_run:  # no run starts: the collector is back on at once
        release_collector()
    if experiment is None and resume is None:
        _list_experiments(project, as_json=as_json)
        return
    if markdown is not None and (dry_run or models is not None or shard is not None):
        raise typer.BadParameter(
            "describes one whole run: not with --dry-run, --models or --shard", param_hint="--markdown"
        )
    if markdown is not None:
        from scoregate.cli.markdown_evidence import check_markdown_path

        check_markdown_path(Path(markdown))
    off = mirrors_off(no_mirror, no_mlflow=no_mlflow, no_langfuse=no_langfuse)
    source = run_flags.prompts_from(prompt_source, no_langfuse)
    named = models.split(",") if models is not None else None
    with run_flags.usage_as_bad_parameter():
        check_run_flags(shard=shard, shards=shards, models=named, run_id=run_id, resume=resume, dry_run=dry_run,
                        no_langfuse=no_langfuse, prompt_source=prompt_source)  # fmt: skip
        options = Options(
            selection=Options.Selection(limit, repeat, run_id),
            models=Options.Models(model, judge_model, _model_from(model)),
            resume=Options.ResumeFrom(resume, retry_errors, quarantine),
            prompts=Options.PromptSource(source, prompt_label, prompt_version),
            mirrors=Options.Mirrors(off, eval_rows, report=not no_report),
            budget=Options.BudgetLimit(budget_usd, budget_minutes),
            sharding=Options.ShardSpec(parse_shard(shard, shards=shards) if shard is not None else None, group),
            stop_early=Options.StopEarly(stop_early, against, max_items, max_cost, stop_batch),
            concurrency=concurrency, use_cache=not no_cache, heartbeat_s=heartbeat,
        )  # fmt: skip
    root, name, human = project_root(project), experiment or "", err_console if as_json else console
    if dry_run:
        _forecast(root, name, options, as_json=as_json)
    elif models is not None:
        _run_each_model(root, name, _model_names(models), options, human, as_json=as_json, fail_on_gates=fail_on_gates)
    else:
        _run_one(root, name, options, human, as_json=as_json, fail_on_gates=fail_on_gates, markdown=markdown)


def _forecast(root: Path, experiment: str, options: RunOptions, *, as_json: bool) -> None:
    """`run --dry-run`: the forecast of one new run, as a table or JSON; no model is called."""
    from scoregate.app import forecast_experiment
    from scoregate.cli.forecast_render import print_forecast

    planned = forecast_experiment(root, experiment, options)
    if as_json:
        typer.echo(json.dumps(planned.to_dict(), indent=2))
    else:
        print_forecast(console, planned)


def _run_each_model(
    root: Path,
    experiment: str,
    names: list[str],
    options: RunOptions,
    human: Console,
    *,
    as_json: bool,
    fail_on_gates: bool,
) -> None:
    """`run --models a,b`: one run per model, each reported, then how to rank them; exit as the worst run says."""
    from scoregate.app import run_models

    outcomes = run_models(root, experiment, names, options)
    for outcome in outcomes:
        _report(outcome, root, human)
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


def _run_one(
    root: Path,
    experiment: str,
    options: RunOptions,
    human: Console,
    *,
    as_json: bool,
    fail_on_gates: bool,
    markdown: str | None = None,
) -> None:
    """One run (or shard, or resume): its report, JSON when asked; exit 1 when no item succeeded, 3 on gates."""
    from scoregate.app import run_experiment

    outcome = run_experiment(root, experiment, options)
    if outcome.nothing_to_do is not None:
        print_wrapped(human, outcome.nothing_to_do)
        for sink, error in outcome.mirror_errors.items():
            print_wrapped(human, f"{sink} mirror failed: {error}", style="yellow")
        return
    if outcome.shard is not None:
        _report_shard(outcome, human, as_json=as_json)
        return
    _report(outcome, root, human)
    if markdown is not None:
        _write_markdown(root, outcome, Path(markdown), human)
    if as_json:
        typer.echo(json.dumps(_outcome_json(outcome), indent=2, default=str))
    if outcome.succeeded_items == 0:
        print_wrapped(human, f"no item of run {outcome.run_id} succeeded", first="error: ", first_style="bold red")
        raise typer.Exit(int(ExitCode.ERROR))
    if fail_on_gates and outcome.verdict != "pass":
        raise typer.Exit(int(ExitCode.GATES_FAILED))
    mirror_exit([outcome])


def _write_markdown(root: Path, outcome: RunOutcome, path: Path, human: Console) -> None:
    """`run --markdown FILE`: the run's evidence for a pull request (`markdown_evidence`)."""
    from scoregate.app import StoredRuns
    from scoregate.cli.layout import keep
    from scoregate.cli.markdown_evidence import run_markdown, shown_path, write_markdown

    key = outcome.summary_record.experiment or outcome.run_id
    view = StoredRuns(root).view(outcome.run_id)
    write_markdown(path, run_markdown(view, report=shown_path(root, outcome.report), key=key))
    print_wrapped(human, keep("markdown:", str(path)))


def _report_shard(outcome: RunOutcome, human: Console, *, as_json: bool) -> None:
    """One shard's end: its items, where they are, how to merge; exit 1 when none succeeded."""
    from scoregate.cli.layout import keep

    metrics = outcome.summary_record.run_metrics
    items, failed = metrics.value("items"), metrics.value("error_count")
    print_wrapped(human, f"shard {outcome.shard} of run {outcome.run_id}: {items} item(s), {failed} failed")
    print_wrapped(human, keep("stored in", str(outcome.store.directory)))
    print_wrapped(human, f"when every shard is done: `scoregate merge {outcome.run_id}`")
    for note in outcome.mirror_notes:
        print_wrapped(human, note)
    for sink, error in outcome.mirror_errors.items():
        print_wrapped(human, f"{sink} mirror failed: {error} — run this shard again to redo it", style="yellow")
    if as_json:
        typer.echo(json.dumps(_outcome_json(outcome), indent=2, default=str))
    if items and outcome.succeeded_items == 0:
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
    from scoregate.app import ProjectOverview

    rows = ProjectOverview(project_root(project)).experiments()
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
    from scoregate.app import ProjectOverview
    from scoregate.cli.layout import keep, keep_name
    from scoregate.cli.render import print_summary

    summary = outcome.summary_record
    print_summary(console, summary, ProjectOverview(root).score_directions())
    from scoregate.cli.stop_early_render import print_stop_early

    print_stop_early(console, summary, outcome.run_id)
    if summary.repeats is not None:
        from scoregate.cli.repeats_render import print_consistency

        print_consistency(console, summary.repeats.to_dict())
    print_wrapped(console, f"run {outcome.run_id} ({keep_name(outcome.run_name)})")
    print_wrapped(console, keep("stored in", str(outcome.store.directory)))
    if outcome.failed_items:
        each = " (counting each repeat)" if summary.repeats is not None else ""
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
        redo = f"scoregate report {outcome.run_id}" if sink == "report" else outcome.mirror_redo.get(sink)
        what = "report not written" if sink == "report" else f"{sink} mirror failed"
        fix = outcome.mirror_fixes.get(sink)  # what the sink's own error says to do (a refusal's real fix)
        again = f" — redo with `{redo}`" if redo and (fix is None or redo not in fix) else ""
        print_wrapped(console, f"{what}: {error}{again}", style="yellow")
        if fix:
            print_wrapped(console, fix, first="  → ", indent="    ", style="yellow")


def mirror_exit(outcomes: list[RunOutcome]) -> None:
    """Exit `MIRROR_REFUSED` (5) when a tracker refused what a run sent; an outage keeps 0 (the sync redoes it)."""
    if any(outcome.mirror_refused for outcome in outcomes):
        raise typer.Exit(int(ExitCode.MIRROR_REFUSED))
