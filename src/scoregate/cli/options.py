"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scoregate.catalog.project import find_root

ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", "-C", help="Project directory (default: the nearest with scoregate.yaml)."),
]


def project_root(project: Path | None) -> Path:
    """Return the project root from the option or the current directory; `-C` must name an existing directory."""
    if project is not None and not project.is_dir():
        from scoregate.errors import ScoregateError

        what = "is not a directory" if project.exists() else "does not exist"
        raise ScoregateError(
            f"-C/--project {project} {what}",
            hint="pass the directory that holds scoregate.yaml (a missing one never falls back to a parent project)",
        )
    return find_root((project or Path.cwd()).resolve())
