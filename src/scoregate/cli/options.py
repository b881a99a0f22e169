"""Options shared by several commands: the `--project` option (`support/command_line.py`) and the project root."""

from __future__ import annotations

from pathlib import Path

from scoregate.support.command_line import (
    PROJECT_HELP,
    ProjectOption,
    chosen_directory,
    global_project,
    project_path,
    set_global_project,
)

__all__ = ["PROJECT_HELP", "ProjectOption", "global_project", "project_path", "project_root", "set_global_project"]


def project_root(project: Path | None) -> Path:
    """Return the project root from the option (else `scoregate -C`, else the current directory).

    `-C` must name an existing directory: a missing one never falls back to a parent project.
    """
    from scoregate.app import find_root
    from scoregate.support.terminal_text import keep_path

    root = find_root(chosen_directory(project))
    keep_path(str(root))  # a path under it is one word even where the root has a space
    return root
