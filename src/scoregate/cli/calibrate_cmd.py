"""`scoregate calibrate`: judge scores against human scores, from stored runs or any score file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from scoregate.cli.corrected_render import print_held_out
from scoregate.cli.layout import print_table, print_wrapped
from scoregate.cli.options import ProjectOption, project_path, project_root
from scoregate.errors import UsageError
from scoregate.support.console import lazy_console

console = lazy_console()

ROWS = (
    ("spearman", "Spearman ρ"),
    ("kendall", "Kendall τ-b"),
    ("pearson", "Pearson r"),
    ("qwk", "quadratic weighted κ"),
    ("exact", "exact agreement"),
    ("within_one", "agreement within ±1"),
    ("mae", "mean absolute error"),
)


def _value(estimate: dict[str, Any] | None) -> tuple[str, str]:
    if estimate is None:
        return "", ""
    if estimate["value"] is None:
        return "—", ""
    ci = "—" if estimate["ci_low"] is None else f"[{estimate['ci_low']:.3f}, {estimate['ci_high']:.3f}]"
    return f"{estimate['value']:.3f}", ci


def print_calibration(data: dict[str, Any]) -> None:
    """Print a calibration as a table of pooled and per-document agreement, with what was left out and why."""
    print_wrapped(
        console,
        f"{data['judge_key']} (judge) vs {data['human_key']} (human) from {data['source']}: "
        f"{data['n_pairs']} of {data['n_total']} items paired"
        + (f", scale {data['scale'][0]}..{data['scale'][1]}" if data["scale"] else ""),
    )
    for reason, count in data["excluded"].items():
        print_wrapped(console, reason, first=f"  left out {count}: ", indent="    ")
    from rich.table import Table

    per_doc = data["per_document"]
    table = Table(title_justify="left")
    for column in ("metric", "pooled", "95% CI", *(("per document", "95% CI ") if per_doc else ())):
        table.add_column(column, justify="left" if column == "metric" else "right")
    notes: dict[str, str] = {}
    for key, label in ROWS:
        pooled = data["pooled"][key]
        if pooled["value"] is None:
            notes[f"{label} (pooled)"] = pooled["reason"]
        cells = list(_value(pooled))
        if per_doc:
            doc = per_doc.get(key)
            if doc is not None and doc["value"] is None:
                notes[f"{label} (per document)"] = doc["reason"]
            cells += _value(doc)
        table.add_row(label, *cells)
    print_table(console, table)
    if per_doc:
        print_wrapped(
            console,
            f"per document ({data['document_key']}): mean over {per_doc['documents_used']} documents; "
            f"{per_doc['documents_skipped']} skipped (judge or human constant, or a single pair)",
        )
    by_reason: dict[str, list[str]] = {}
    for label, reason in notes.items():
        by_reason.setdefault(reason.replace("pass scale=(low, high)", "pass --scale LOW,HIGH"), []).append(label)
    for reason, labels in by_reason.items():
        print_wrapped(console, f"{', '.join(labels)}: {reason}")


def print_canaries(results: list[Any]) -> None:
    """Print each judge's canary: the new agreement and its change against the stored calibration."""
    for result in results:
        drift = result.drift
        style = {"ok": "green", "drifted": "red"}.get(drift.status, "yellow")
        keys = f"{result.score_key} vs {result.human_key}"
        print_wrapped(console, f"{result.judge} ({keys}), canary run {result.run_id}:")
        print_wrapped(console, drift.detail, first=f"  {drift.status}: ", first_style=style, indent="    ")
        if result.langfuse_definition:
            marker = f"`{result.judge} definition {result.langfuse_definition}`"
            print_wrapped(console, f"the Langfuse evaluator marked {marker}", first="  judge version: ", indent="    ")
        print_wrapped(console, f"{result.saved_to}", first="  saved ", first_style="green")


def calibrate_command(
    judge_key: Annotated[
        str | None, typer.Option("--judge-key", help="Judge score: a run's score key, or a file column.")
    ] = None,
    human_key: Annotated[
        str | None,
        typer.Option("--human-key", help="Human score: an imported feedback key (human_faithfulness), or a column."),
    ] = None,
    canary: Annotated[
        bool,
        typer.Option(
            "--canary", help="Re-score each judge's pinned calibration set (`canaries:`) and measure its drift."
        ),
    ] = False,
    judge: Annotated[
        list[str] | None, typer.Option("--judge", help="With --canary: only this judge (repeatable).")
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option("--run", help="A stored run to calibrate on; repeat to pool runs (documents = item ids)."),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", help="A .jsonl, .json (array) or .csv file with one record per rated item."),
    ] = None,
    document_key: Annotated[
        str | None,
        typer.Option(
            "--document-key", help="Document id for summary-level correlations: a column, or input.<f> in a run."
        ),
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(help="Integer rating scale LOW,HIGH for kappa and agreement (runs: the judge's range)."),
    ] = None,
    resamples: Annotated[int | None, typer.Option(min=100, help="Bootstrap resamples (default 2000).")] = None,
    seed: Annotated[int | None, typer.Option(help="Bootstrap seed (default 0).")] = None,
    save: Annotated[
        bool, typer.Option("--save", help="Keep the result in calibrations/<evaluator>.json, bound to the judge.")
    ] = False,
    corrected_labels: Annotated[
        int | None,
        typer.Option(
            "--corrected-labels",
            min=1,
            help="Also check the corrected mean: N items rated by both are a random calibration sample (--seed), "
            "the rest a run whose human mean is held back and compared.",
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option("--live", help="With --run: the live judges' scores (`scores pull`) instead of the run's own."),
    ] = False,
    evaluator_version: Annotated[
        str | None,
        typer.Option("--evaluator-version", help="With --live: the deployed evaluator version to measure."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """Measure how well a judge agrees with human ratings: correlations, kappa, agreement, MAE, with 95% CIs.

    Column names in --file are dotted paths into each record (predict_scores.consistency); an exact key wins.
    """
    if canary:
        from scoregate.app import run_canaries

        if run is not None or file is not None or save:
            raise typer.BadParameter("--canary runs the pinned sets itself: no --run, --file or --save")
        results = run_canaries(project_root(project), judge or None, resamples=resamples, seed=seed)
        if as_json:
            typer.echo(json.dumps([r.to_dict() for r in results], indent=2, ensure_ascii=False))
        else:
            print_canaries(results)
        return
    if judge_key is None or human_key is None:
        raise typer.BadParameter("give --judge-key and --human-key (or --canary)", param_hint="--judge-key")
    from scoregate.app import CalibrationRequest, calibrate_file, calibrate_stored_runs

    try:
        request = CalibrationRequest(
            judge_key,
            human_key,
            runs=tuple(run or ()),
            file=project_path(project, file) if file is not None else None,
            document_key=document_key,
            scale_text=scale,
            resamples=resamples,
            seed=seed,
            save=save,
            corrected_labels=corrected_labels,
            live=live,
            evaluator_version=evaluator_version,
        )
    except UsageError as exc:  # a contradiction the library found, said as Typer says a bad flag
        raise typer.BadParameter(exc.message, param_hint=exc.option) from exc
    if request.file is not None:
        data = calibrate_file(request).to_dict()
    else:
        data = calibrate_stored_runs(project_root(project), request).to_dict()
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    print_calibration(data)
    if data.get("held_out"):
        print_held_out(console, data["held_out"])
    judge = data.get("judge")
    if data.get("saved_to") and judge:
        model = judge["model"] or {}
        bound = f"{judge['evaluator']} v{judge['version']} ({judge['fingerprint'][:12]})"
        if model:
            bound += f" judged by {model.get('provider')}/{model.get('model')}"
        print_wrapped(console, f"{data['saved_to']}: bound to {bound}", first="saved ", first_style="green")
