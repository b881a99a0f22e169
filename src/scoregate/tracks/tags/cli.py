"""`scoregate gold validate|build`: check gold-label files, build a tags dataset from its folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.errors import ExitCode
from scoregate.support.command_line import ProjectOption, project_path
from scoregate.support.console import lazy_console
from scoregate.support.terminal_text import print_wrapped

app = typer.Typer(help="Gold labels of the semantic tags track: validate and build.", no_args_is_help=True)
console = lazy_console()


@app.command("validate")
def validate_command(
    path: Annotated[Path, typer.Argument(help="A *_gold.json file or a folder (searched recursively).")],
    project: ProjectOption = None,
) -> None:
    """Check gold files: JSON Schema, topic vocabulary, risk severities, required fields, sample id = file name."""
    from scoregate.tracks.tags.gold import validate_gold

    report = validate_gold(project_path(project, path))
    for violation in report.violations:
        print_wrapped(console, violation.render())
    bad = len({v.path for v in report.violations})
    print_wrapped(console, f"{report.files} gold file(s) checked: {report.files - bad} valid, {bad} with "
                           f"{len(report.violations)} violation(s)")  # fmt: skip
    if report.violations:
        raise typer.Exit(int(ExitCode.ERROR))


@app.command("build")
def build_command(
    folder: Annotated[Path, typer.Argument(help="Dataset folder with transcripts/ and goldens/.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Dataset file to write (default: <folder>.jsonl).")
    ] = None,
    project: ProjectOption = None,
) -> None:
    """Build `<folder>.jsonl` (and its .yaml) from transcripts and gold files; every gold file is validated first."""
    from scoregate.tracks.tags.dataset import build_tags_dataset

    folder = project_path(project, folder)
    target = project_path(project, out) if out is not None else folder.with_suffix(".jsonl")
    items, with_gold = build_tags_dataset(folder, target)
    print_wrapped(console, f"wrote {target}: {items} item(s), {with_gold} with gold labels")
