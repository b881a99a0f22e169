"""The regression gate of a run: find the run of the version holding the label, then judge the pair.

Which version holds the label and which run is the baseline follow the rule in `scoregate.analysis.regression`;
here are the reads it needs: promotions.jsonl (the project's promotion log) and the local run store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoregate.analysis.gates import GateResult
from scoregate.analysis.regression import (
    PROMOTIONS_LOG,
    GateLike,
    LabelHolder,
    compared_label,
    judge_regression,
    label_holders,
    metric_values,
    why_not_baseline,
    without_baseline,
)
from scoregate.store.invalidation import why_invalid
from scoregate.store.record import DatasetReceipt
from scoregate.store.run_store import RunStore, list_runs


def promotion_records(project_root: Path) -> list[dict[str, Any]]:
    """The records of the project's promotions.jsonl, oldest first (a broken line is skipped)."""
    path = project_root / PROMOTIONS_LOG
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():  # a line not UTF-8 stays broken
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a broken line is reported by `scoregate promotions`; it cannot name a holder
        if isinstance(record, dict):
            records.append(record)
    return records


@dataclass(frozen=True)
class BaselineSearch:
    """The baseline found, or why none was."""

    store: RunStore | None
    holders: dict[str, LabelHolder]
    problem: str | None


def find_baseline(current: RunStore, *, label: str, project_root: Path, runs_dir: Path) -> BaselineSearch:
    """Return the newest valid run of the versions holding `label` on the current run's dataset version."""
    manifest = current.manifest_record
    receipts = manifest.receipts
    stores = [s for s in list_runs(runs_dir) if s.run_id != current.run_id]
    records = promotion_records(project_root)
    holders = label_holders(receipts.prompts, label, records=records, stores=stores)
    unknown = [h for h in holders.values() if h.version is None]
    if unknown:
        return BaselineSearch(None, holders, "; ".join(h.source for h in unknown))
    wanted = ", ".join(f"{h.prompt}@{h.version}" for h in holders.values())
    rejected: list[str] = []
    for store in stores:
        why = why_invalid(store) or why_not_baseline(store.manifest_record, manifest, holders)
        if why is None:
            return BaselineSearch(store, holders, None)
        if len(rejected) < 3 and not why.endswith("not the labelled version") and not why.startswith("other prompts"):
            rejected.append(f"{store.run_id}: {why}")
    dataset = receipts.dataset or DatasetReceipt(name="?")
    problem = f"no valid run of {label} ({wanted}) on {dataset.name} ({str(dataset.content_hash)[:12]})"
    if rejected:
        problem += "; newest rejected: " + "; ".join(rejected)
    return BaselineSearch(None, holders, problem)


def evaluate_regression_gate(
    gate: GateLike,
    current: RunStore,
    *,
    project_root: Path,
    runs_dir: Path | None = None,
    min_coverage: float = 0.8,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> GateResult:
    """Judge a regression gate: paired non-inferiority of `current` against the labelled version's latest run."""
    label = compared_label(gate)
    search = find_baseline(current, label=label, project_root=project_root, runs_dir=runs_dir or project_root / "runs")
    if search.store is None:
        return without_baseline(gate, str(search.problem))
    baseline = search.store
    versions = ", ".join(f"{h.prompt}@{h.version}" for h in search.holders.values())
    return judge_regression(
        gate, metric_values(baseline.iter_results(), gate.metric), metric_values(current.iter_results(), gate.metric),
        against=f"vs {label} run {baseline.run_id} ({versions})", min_coverage=min_coverage, confidence=confidence,
        resamples=resamples, seed=seed,
    )  # fmt: skip
