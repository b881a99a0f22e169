"""Regression-gate runs: base scores, stored runs of a prompt version, promotions, and the gate over them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.analysis.gates import GateResult
from scoregate.app.regression_gate import evaluate_regression_gate
from scoregate.store.run_store import RunStore
from support.compare_runs import write_run

PROMPT = "summarization-catchup"


METRIC = "WeightedQuality"


BASE = [3.0, 4.2, 3.6, 2.8, 4.0, 3.4, 4.4, 3.0, 3.8, 2.6, 4.6, 3.2, 3.6, 4.0, 2.4, 3.8]


@dataclass(frozen=True)
class Gate:
    """A regression gate as scoregate.yaml will declare it (GateSpec with `compare_to` and `margin`)."""

    name: str = "no_regression_hardcases"
    metric: str = METRIC
    op: str = ">="
    threshold: float = 0.0
    stat: str = "paired_noninferiority"
    min_coverage: float | None = None
    compare_to: str | None = "production"
    margin: float | None = 0.2


def catchup(version: str, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    """Receipts of a run of the catch-up prompt at `version` carrying `labels`."""
    return {PROMPT: {"version": version, "labels": list(labels), "temperature": None, "max_tokens": None}}


def run(
    root: Path, run_id: str, values: Sequence[float | None], *, version: str, day: int, **overrides: Any
) -> RunStore:
    """Store a run of `version` on the hardcases items with `values` of the metric, started on January `day`."""
    overrides.setdefault("prompts", catchup(version))
    scores = {f"hard-{i:02d}": {METRIC: v} for i, v in enumerate(values)}
    return write_run(root / "runs", run_id, scores, started_at=f"2026-01-{day:02d}T00:00:00+00:00", **overrides)


def promotions(root: Path, *moves: tuple[str, str, int]) -> None:
    """Write promotions.jsonl with (prompt, action, version) records of the production label, oldest first."""
    lines = [
        json.dumps({"prompt": p, "label": "production", "action": a, "version": v, "time": f"2026-01-0{i + 1}"})
        for i, (p, a, v) in enumerate(moves)
    ]
    (root / "promotions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def gate_of(root: Path, current: RunStore, gate: Any = None, **kwargs: Any) -> GateResult:
    """Evaluate the regression gate for `current` in project `root`."""
    return evaluate_regression_gate(gate or Gate(), current, project_root=root, **kwargs)
