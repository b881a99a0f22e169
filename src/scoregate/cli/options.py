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
    """Return the project root from the option or the current directory."""
    return find_root((project or Path.cwd()).resolve())
