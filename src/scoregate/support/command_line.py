"""The `--project`/`-C` option every command shares (the CLI's and the tracks'), and where it points."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.errors import ScoregateError

PROJECT_HELP = "Project directory (default: the nearest with scoregate.yaml)."
ProjectOption = Annotated[Path | None, typer.Option("--project", "-C", help=PROJECT_HELP)]

_global_project: list[Path | None] = [None]


def set_global_project(project: Path | None) -> None:
    """Remember `scoregate -C DIR` (given before the subcommand) as every command's default project."""
    _global_project[0] = project


def global_project() -> Path | None:
    """Return the project given before the subcommand, if any."""
    return _global_project[0]


def project_path(project: Path | None, path: Path) -> Path:
    """Return `path`, read relative to `-C DIR` when one was given (as `git -C` and `make -C` do)."""
    base = project or global_project()
    return path if path.is_absolute() or base is None else base / path


def chosen_directory(project: Path | None) -> Path:
    """Return the directory to look for the project from: the option, else `scoregate -C`, else the current one.

    `-C` must name an existing directory: a missing one never falls back to a parent project.
    """
    chosen = project or global_project()
    if chosen is not None and not chosen.is_dir():
        what = "is not a directory" if chosen.exists() else "does not exist"
        raise ScoregateError(
            f"-C/--project {chosen} {what}",
            hint="pass the directory that holds scoregate.yaml (a missing one never falls back to a parent project)",
        )
    return (chosen or Path.cwd()).resolve()
