"""Stop-early runs: the test dataset grown to 60 items, and a reply with no sections (from test_stop_early)."""

from __future__ import annotations

import json
from pathlib import Path

ITEMS = 60


NO_SECTIONS = "A summary in one paragraph, with no sections at all."


def _grow_dataset(project_dir: Path) -> list[str]:
    """Make the test dataset 60 items: ten copies of each smoke item under new ids."""
    path = project_dir / "datasets" / "smoke_v1.jsonl"
    base = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [{**item, "id": f"{item['id']}-{copy:02d}"} for copy in range(ITEMS // len(base)) for item in base]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return [row["id"] for row in rows]
