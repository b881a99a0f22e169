"""A results.jsonl line whose numeric score is NaN or ±Infinity (a file edited by hand, or written by another tool):
the score reads as not measured, with its reason, so every reader (compare, plan, report) counts it as missing
instead of failing with a traceback or averaging a NaN."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from scoregate.store.run_store import RunStore
from support.compare_runs import write_run
from support.projects import CliResult


def _spoil(store: RunStore, values: dict[str, float]) -> None:
    """Write `values` (item id → a non-finite number) into the quality score of those items' results lines."""
    path = store.directory / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        for score in row["scores"]:
            if row["item_id"] in values and score["name"] == "quality":
                score["value"] = values[row["item_id"]]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")  # NaN, Infinity as Python writes


def test_a_nan_or_infinite_score_reads_as_not_measured_and_compare_pairs_the_rest(
    scoregate: Callable[..., CliResult], project_dir: Path
) -> None:
    runs_dir = project_dir / "runs"
    write_run(runs_dir, "run-a", {f"i{k}": {"quality": k % 5 + 1} for k in range(8)})
    spoiled = write_run(runs_dir, "run-b", {f"i{k}": {"quality": min(5, k % 5 + 2)} for k in range(8)})
    _spoil(spoiled, {"i0": float("nan"), "i1": float("inf"), "i2": float("-inf")})

    read = {r.item_id: r.score("quality") for r in RunStore(runs_dir / "run-b").iter_results()}
    assert [read[i].value for i in ("i0", "i1", "i2")] == [None, None, None]  # type: ignore[union-attr]
    assert "not a finite number" in (read["i0"].reason or "")  # type: ignore[union-attr]
    assert read["i3"].value == 5  # type: ignore[union-attr]

    result = scoregate("compare", "run-a", "run-b", "--no-mlflow", "--metric", "quality")

    assert result.code == 0, result.output
    row = next(line for line in result.out.splitlines() if "quality" in line and "│" in line)
    assert "│ 5 │" in row.replace("  ", " ").replace("  ", " "), row  # 8 shared items, 3 not measured in B
