"""`scoregate connection-test` and `scoregate extraction import-sgd|import-hf|check`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scoregate.errors import ExitCode
from scoregate.support.command_line import ProjectOption, chosen_directory, project_path
from scoregate.support.console import lazy_console
from scoregate.support.terminal_text import print_wrapped

if TYPE_CHECKING:
    from scoregate.tracks.extraction.connection import StructuredOutputStyle
    from scoregate.tracks.extraction.items import ItemProblem

app = typer.Typer(help="Structured-extraction datasets: import and check.", no_args_is_help=True)
console = lazy_console()
HUB_NAME = (
    "paraloq/json_data_extraction"  # scoregate.tracks.extraction.paraloq.HUB_NAME, kept here so --help imports nothing
)

OutOption = Annotated[Path, typer.Option("--out", "-o", help="Dataset file to write, e.g. datasets/sgd_v1.jsonl.")]


def _print_problems(problems: list[ItemProblem], total: int) -> None:
    for p in problems:
        print_wrapped(console, f"{p.item_id}: {p.problem}", first="not scorable ", first_style="yellow")
    print_wrapped(console, f"{total - len(problems)} of {total} items can be scored; {len(problems)} cannot")


def connection_test_command(
    base_url: Annotated[str, typer.Option("--base-url", help="OpenAI-compatible base URL, e.g. http://host:8000/v1.")],
    model: Annotated[str | None, typer.Option(help="Model to test (default: the first one listed).")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Env var holding the API key (default: OPENAI_API_KEY, if set).")
    ] = None,
    style: Annotated[
        str, typer.Option(help="Structured-output style: json_schema, json_object_schema or guided_json.")
    ] = "json_schema",
    timeout: Annotated[float, typer.Option(min=1, help="Seconds to wait for the structured reply.")] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    project: ProjectOption = None,
) -> None:
    """List the endpoint's models and send one structured request; exit 1 unless the reply obeys the schema."""
    from scoregate.tracks.extraction.connection import run_connection_test

    styles: dict[str, StructuredOutputStyle] = {
        "json_schema": "json_schema",
        "json_object_schema": "json_object_schema",
        "guided_json": "guided_json",
    }
    if style not in styles:
        raise typer.BadParameter(f"--style must be one of {', '.join(styles)}")
    report = run_connection_test(base_url, model=model, api_key_env=api_key_env, style=styles[style], timeout_s=timeout)
    if as_json:
        console.print_json(json.dumps(report.to_dict()))
    else:
        print_wrapped(console, f"models at {report.base_url}: {', '.join(report.models)}")
        latency = f"{report.latency_ms:.0f} ms" if report.latency_ms is not None else "unknown latency"
        tokens = f"{report.tokens_in} in / {report.tokens_out} out tokens"
        print_wrapped(console, f"structured request ({report.style}) to {report.model}: {latency}, {tokens}")
        print_wrapped(console, f"reply: {report.reply[:300]}")
        if report.ok:
            f1 = f"{report.field_f1:.2f}" if report.field_f1 is not None else "n/a"
            print_wrapped(
                console, f"the reply is JSON that obeys the schema (field F1 on the sample: {f1})", first="ok ",
                first_style="green",
            )  # fmt: skip
        else:
            what = "does not obey the schema" if report.parsed else "is not valid JSON"
            print_wrapped(console, f"the reply {what}: {'; '.join(report.errors)}", first="failed ", first_style="red")
    if not report.ok:
        raise typer.Exit(int(ExitCode.ERROR))


@app.command("import-sgd")
def import_sgd(
    source: Annotated[
        Path, typer.Argument(help="sgd_extraction.jsonl (Schema-Guided Dialogue records), or the folder holding it.")
    ],
    out: OutOption,
    project: ProjectOption = None,
) -> None:
    """Convert SGD extraction records into a scoregate dataset (plus its .yaml); report unscorable references."""
    from scoregate.tracks.extraction.items import write_dataset
    from scoregate.tracks.extraction.sgd import load_sgd

    source, out = project_path(project, source), project_path(project, out)
    if source.is_dir():
        source = source / "sgd_extraction.jsonl"
    count, problems = write_dataset(
        load_sgd(source), out, description=f"Schema-Guided Dialogue extraction items imported from {source.name}."
    )
    print_wrapped(console, f"wrote {count} items to {out} (and {out.with_suffix('.yaml').name})")
    _print_problems(problems, count)


@app.command("import-hf")
def import_hf(
    out: OutOption,
    source: Annotated[
        str, typer.Option(help="Hub dataset name, or a local .parquet/.jsonl file in its format.")
    ] = HUB_NAME,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "train",
    limit: Annotated[int | None, typer.Option(min=1, help="Import only the first N rows.")] = None,
    project: ProjectOption = None,
) -> None:
    """Import paraloq/json_data_extraction (columns text, schema, item); the hub needs `pip install datasets`."""
    from scoregate.tracks.extraction.items import write_dataset
    from scoregate.tracks.extraction.paraloq import load_paraloq

    out = project_path(project, out)
    if Path(source).suffix in (".parquet", ".jsonl"):
        source = str(project_path(project, Path(source)))
    count, problems = write_dataset(
        load_paraloq(source, split=split, limit=limit),
        out,
        description=f"{source} ({split}) imported for structured extraction.",
    )
    print_wrapped(console, f"wrote {count} items to {out} (and {out.with_suffix('.yaml').name})")
    _print_problems(problems, count)


def _dataset_file(project: Path | None, dataset: str) -> Path:
    """Return the file of a dataset given by path, or by name (datasets/NAME.jsonl of the project)."""
    path = project_path(project, Path(dataset))
    if path.is_file() or path.suffix == ".jsonl" or "/" in dataset:
        return path
    from scoregate.catalog.project import find_root
    from scoregate.errors import ScoregateError

    try:
        named = find_root(chosen_directory(project)) / "datasets" / f"{dataset}.jsonl"
    except ScoregateError:
        return path
    return named if named.is_file() else path


@app.command("check")
def check_command(
    dataset: Annotated[
        str, typer.Argument(help="A dataset name (datasets/NAME.jsonl of the project) or a .jsonl file.")
    ],
    project: ProjectOption = None,
) -> None:
    """Check every item's schema and reference (it must obey its own schema); exit 1 if any item cannot be scored."""
    from scoregate.tracks.extraction.items import check_dataset

    count, problems = check_dataset(_dataset_file(project, dataset))
    _print_problems(problems, count)
    if problems:
        raise typer.Exit(int(ExitCode.ERROR))
