"""The git commit a folder is at, for the receipts of what a run or a prompt sync came from."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def git_commit(root: Path) -> dict[str, Any]:
    """Return the commit the project is at and whether the work tree has changes (None outside git)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(dirty)}
