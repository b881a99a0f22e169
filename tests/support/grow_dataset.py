"""Grow the test project's dataset to many items (for runs long enough to signal or fill a disk)."""

from __future__ import annotations

import json
from pathlib import Path


def grow_dataset(project_dir: Path, count: int) -> list[str]:
    """Make the smoke dataset `count` items long (copies of the shipped items under new ids); return the ids."""
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    grown = [dict(items[n % len(items)], id=f"item-{n:04d}") for n in range(count)]
    path.write_text("".join(json.dumps(item) + "\n" for item in grown), encoding="utf-8")
    return [item["id"] for item in grown]
