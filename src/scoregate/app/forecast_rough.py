"""A rough wall time where the forecast has none (no past run of the experiment on its model): from the call times
of the same models in the project's other runs, or, at a run's start, the floor its models' one-token check sets."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from scoregate.analysis.forecast import CallGroup, Forecast, PastCalls, forecast, observed_parallelism
from scoregate.app.past_telemetry import call_spans, read_metrics
from scoregate.catalog.config_models import Settings
from scoregate.store.telemetry import METRICS_JSON

PAST_RUNS = 20
"""The newest runs of other experiments whose call times a rough wall time reads."""


def _model_runs(runs_dir: Path, models: set[str], experiment: str) -> list[dict[str, Any]]:
    """The telemetry of the newest PAST_RUNS runs of other experiments that called any of `models`."""
    found: list[dict[str, Any]] = []
    paths = sorted(runs_dir.glob(f"*/{METRICS_JSON}"), key=lambda p: p.parent.name, reverse=True)
    for path in paths:
        data = read_metrics(path)
        if data is None or data.get("experiment") == experiment:
            continue
        if any(isinstance(r, dict) and r.get("model_name") in models for r in data["rows"]):
            found.append(data)
        if len(found) >= PAST_RUNS:
            break
    return found


def _fresh_calls(data: dict[str, Any], models: set[str]) -> list[dict[str, Any]]:
    """A run's item calls to `models` that went to the model (not cache hits) and took a measured time."""
    return [
        r
        for r in data["rows"]
        if isinstance(r, dict)
        and r.get("item_id") is not None
        and r.get("model_name") in models
        and not r.get("cache_hit")
        and isinstance(r.get("duration_ms"), int | float)
    ]


def rough_wall(
    runs_dir: Path, experiment: str, groups: list[CallGroup], fc: Forecast, settings: Settings
) -> tuple[Forecast, str | None]:
    """`fc` with a rough wall time from the call times of its models in other experiments' runs, and what it rests
    on; `fc` unchanged and None when a model with planned calls has no measured call there."""
    models = {g.model for g in groups if g.calls}
    if fc.wall_s is not None or not models:
        return fc, None
    times: dict[str, list[float]] = defaultdict(list)
    used, parallel = [], []
    for data in _model_runs(runs_dir, models, experiment):
        calls = _fresh_calls(data, models)
        if not calls:
            continue
        used.append(str(data.get("run_id")))
        for row in calls:
            times[str(row["model_name"])].append(float(row["duration_ms"]))
        parallel.append(observed_parallelism(call_spans(calls)))
    if not models <= times.keys():
        return fc, None
    timed = [replace(g, past=replace(g.past or PastCalls(), duration_ms=times[g.model])) for g in groups]
    known = sorted(p for p in parallel if p is not None)
    reached = known[len(known) // 2] if known else float(fc.concurrency)
    walled = forecast(
        timed, concurrency=fc.concurrency, parallelism=reached, level=settings.confidence_level,
        resamples=settings.bootstrap_resamples, seed=settings.seed,
    )  # fmt: skip
    names = ", ".join(sorted(models))
    basis = f"rough: the call times of {names} in {len(used)} run{'s' if len(used) != 1 else ''} of other experiments"
    newest = f" ({used[0]})" if len(used) == 1 else f" (newest {used[0]})"
    return replace(fc, wall_s=walled.wall_s, parallelism=walled.parallelism), basis + newest


def check_floor_s(calls_by_model: dict[str, int], check_ms: dict[str, float], concurrency: int) -> float | None:
    """The least wall time the planned calls can take if each takes at least its model's one-token check: their
    summed check times over `concurrency`; None when a model with calls was not checked."""
    if not calls_by_model or not calls_by_model.keys() <= check_ms.keys():
        return None
    total_ms = sum(calls * check_ms[model] for model, calls in calls_by_model.items())
    return total_ms / 1000 / max(concurrency, 1)
