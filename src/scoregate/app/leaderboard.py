"""The leaderboard's file: `runs/leaderboard.json`, written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scoregate.errors import ScoregateError

LEADERBOARD = "leaderboard.json"


def write_leaderboard(runs_dir: Path, board: dict[str, Any]) -> Path:
    """Write `runs/leaderboard.json` atomically; return its path."""
    path = runs_dir / LEADERBOARD
    tmp = path.with_name(f"{LEADERBOARD}.{os.getpid()}.tmp")
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(board, indent=2), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        if tmp.is_file():
            tmp.unlink()
        raise ScoregateError(
            f"cannot write the leaderboard: {exc.strerror}",
            where=str(path),
            hint="make runs/leaderboard.json a writable file (remove a folder of that name)",
        ) from None
    return path
