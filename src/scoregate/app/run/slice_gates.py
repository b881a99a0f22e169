"""A regression gate with `slices:`: the whole-run non-inferiority test, then the comparison slice by slice."""

from __future__ import annotations

from pathlib import Path

from scoregate.analysis.gates import GateResult
from scoregate.analysis.regression import DEFAULT_LABEL, DEFAULT_MARGIN
from scoregate.analysis.slices import PairedItem, compare_slices, with_slices
from scoregate.app.regression_gate import evaluate_regression_gate, find_baseline
from scoregate.catalog.config_models import GateSpec
from scoregate.catalog.slice_fields import slice_value
from scoregate.store.run_store import RunStore


def _measured(store: RunStore, metric: str, fields: list[str]) -> dict[str, tuple[float, dict[str, str]]]:
    """Item id → (the metric's value, its slice per field), for the items where the metric was measured."""
    rows: list[tuple[int, str, float, dict[str, str]]] = []
    for result in store.iter_results():
        score = result.score(metric)
        if score is None or score.value is None or isinstance(score.value, str):
            continue
        slices = {f: slice_value(f, result.input, result.metadata) for f in fields}
        rows.append((result.index, result.item_id, float(score.value), slices))
    return {item_id: (value, slices) for _, item_id, value, slices in sorted(rows, key=lambda row: row[0])}


def slice_items(gate: GateSpec, current: RunStore, baseline: RunStore) -> list[PairedItem]:
    """The items measured in both runs, each with its slice per field of `gate.slices` (read from `current`)."""
    reference = _measured(baseline, gate.metric, [])
    return [
        PairedItem(slices, reference[item_id][0], value)
        for item_id, (value, slices) in _measured(current, gate.metric, list(gate.slices or [])).items()
        if item_id in reference
    ]


def evaluate_slice_gate(
    gate: GateSpec,
    current: RunStore,
    *,
    project_root: Path,
    runs_dir: Path,
    min_coverage: float,
    confidence: float,
    resamples: int,
    seed: int,
) -> GateResult:
    """Judge a regression gate and, when it found its baseline, each slice of its `slices:` fields against it.

    The slices are read from the candidate run's items (the baseline ran the same dataset version).
    """
    overall = evaluate_regression_gate(
        gate, current, project_root=project_root, runs_dir=runs_dir, min_coverage=min_coverage,
        confidence=confidence, resamples=resamples, seed=seed,
    )  # fmt: skip
    fields = list(gate.slices or [])
    search = find_baseline(
        current, label=gate.compare_to or DEFAULT_LABEL, project_root=project_root, runs_dir=runs_dir
    )
    if not fields or search.store is None:
        return overall
    items = slice_items(gate, current, search.store)
    results = compare_slices(
        items, fields, margin=DEFAULT_MARGIN if gate.margin is None else gate.margin,
        direction="lower" if gate.op in ("<=", "<") else "higher", alpha=1 - confidence,
        min_items=gate.min_slice_items, resamples=resamples, seed=seed,
    )  # fmt: skip
    return with_slices(overall, results, min_items=gate.min_slice_items)
