"""Rank several runs of one dataset (one per model): ranking, paired tests, win rates, Pareto fronts, best-by-metric.

Runs are paired by item id; only items measured in both runs of a pair are compared, and how many were left
out is reported. The ranking metric defaults to the experiment's primary metric (the first metric its gates use
that is a per-item score); any per-item score with a direction works. Each pair's verdict follows its printed
CI, Holm-adjusted across the pairs (the rule of `scoregate.analysis.paired.VERDICT_RULE`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

from scoregate.analysis.paired import PairedComparison, compare_paired, holm, holm_intervals
from scoregate.analysis.pareto import pareto_front
from scoregate.analysis.ranking_result import ModelRanking, PairResult, RankedRun
from scoregate.analysis.run_source import RunSource, recorded_gates
from scoregate.analysis.stats import describe
from scoregate.analysis.track_metrics import TrackMetrics, track_label
from scoregate.catalog.directions import default_direction
from scoregate.catalog.models import Direction
from scoregate.errors import ScoregateError
from scoregate.store.run_labels import identity, run_labels

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, RunSummary

RUN_METRICS_COMPARED = ("success_rate", "latency_p50_ms", "latency_p95_ms", "latency_mean_ms", "cost_usd_total")


def lower_is_better(metric: str, directions: Mapping[str, Direction] | None = None) -> bool:
    """True when a smaller value of `metric` is better."""
    return _direction(metric, directions) == "lower"


def _direction(metric: str, directions: Mapping[str, Direction] | None) -> Direction:
    if directions and metric in directions:
        return directions[metric]
    return default_direction(metric)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str) or not math.isfinite(float(value)):
        return None
    return float(value)


@dataclass
class _Run:
    store: RunSource
    manifest: Manifest
    summary: RunSummary
    values: dict[str, float | None]
    label: str = ""
    numeric: dict[str, dict[str, float | None]] = field(default_factory=dict)


NUMERIC_TYPES = ("numeric", "boolean")


def _load(stores: Sequence[RunSource]) -> list[_Run]:
    if len(stores) < 2:
        raise ScoregateError("ranking needs at least two runs", hint="pass two or more run ids")
    runs = []
    for store in stores:
        summary = store.summary_record
        if summary is None:
            raise ScoregateError(
                f"run {store.run_id} has no summary.json (unfinished?)", hint="resume it with `scoregate run --resume`"
            )
        numeric: dict[str, dict[str, float | None]] = {}
        for result in store.iter_results():
            numeric[result.item_id] = {
                score.name: _number(score.value) for score in result.scores if score.data_type in NUMERIC_TYPES
            }
        runs.append(_Run(store, store.manifest_record, summary, {}, numeric=numeric))
    datasets = {(r.summary.dataset, _dataset_hash(r.manifest)) for r in runs}
    if len(datasets) > 1:
        seen = ", ".join(f"{r.store.run_id}: {r.summary.dataset}" for r in runs)
        raise ScoregateError(
            f"the runs are not of the same dataset (content): {seen}",
            hint="rank runs of one experiment's dataset, e.g. those of `scoregate run EXPERIMENT --models a,b,c`",
        )
    labels = run_labels([identity(r.store.run_id, r.summary, r.manifest) for r in runs])
    for r, label in zip(runs, labels, strict=True):
        r.label = label
    return runs


def _dataset_hash(manifest: Manifest) -> str | None:
    dataset = manifest.receipts.dataset
    return dataset.content_hash if dataset else None


def _shared(a: _Run, b: _Run) -> tuple[list[float], list[float], int, int]:
    """Aligned measured values of two runs, the shared item count, and the shared items unmeasured on a side."""
    shared = [i for i in a.values if i in b.values]
    pairs = [(a.values[i], b.values[i]) for i in shared]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None]
    return [x for x, _ in kept], [y for _, y in kept], len(shared), len(pairs) - len(kept)


def _ranks(means: list[float | None], higher_is_better: bool) -> list[int | None]:
    ranks: list[int | None] = []
    for m in means:
        if m is None:
            ranks.append(None)
            continue
        better = sum(1 for o in means if o is not None and (o > m if higher_is_better else o < m))
        ranks.append(better + 1)
    return ranks


def _best(
    runs: Sequence[_Run], metric: str, read: Any, directions: Mapping[str, Direction] | None = None
) -> dict[str, Any] | None:
    if _direction(metric, directions) == "none":
        return None  # described, never "best"
    values = {r.label: read(r) for r in runs}
    measured = {k: v for k, v in values.items() if v is not None}
    if not measured:
        return None
    lower = lower_is_better(metric, directions)
    target = min(measured.values()) if lower else max(measured.values())
    best = [k for k, v in measured.items() if v == target]
    return {"best": best, "value": target, "higher_is_better": not lower, "measured_runs": len(measured)}


def available_metrics(runs: Sequence[_Run]) -> list[str]:
    """Return the per-item numeric scores every run has, in first-seen order."""
    per_run = []
    for r in runs:
        seen: dict[str, None] = {}
        for row in r.numeric.values():
            seen.update(dict.fromkeys(row))
        per_run.append(seen)
    return [m for m in per_run[0] if all(m in other for other in per_run[1:])]


def primary_metric(runs: Sequence[_Run], available: Sequence[str]) -> str | None:
    """Return the first metric the runs' recorded gates use that is a per-item score of every run."""
    for r in runs:
        for gate in recorded_gates(r.manifest.receipts):
            if gate.get("metric") in available:
                return str(gate["metric"])
    return None


def _choose_metric(
    runs: Sequence[_Run], metric: str | None, directions: Mapping[str, Direction] | None
) -> tuple[str, str]:
    available = available_metrics(runs)
    listed = ", ".join(available) or "none"
    if metric is None:
        found = primary_metric(runs, available)
        if found is None:
            raise ScoregateError(
                "the runs' gates name no per-item score to rank by", hint=f"pass --metric, one of: {listed}"
            )
        metric, source = found, "the experiment's primary metric (its first gated score)"
    else:
        source = "--metric"
    if metric not in available:
        raise ScoregateError(
            f"unknown --metric {metric!r}: not a per-item score of every run", hint=f"use one of: {listed}"
        )
    if _direction(metric, directions) == "none":
        with_direction = ", ".join(m for m in available if _direction(m, directions) != "none")
        raise ScoregateError(
            f"{metric} has no direction (it is described, never better or worse), so it cannot rank runs",
            hint=f"rank by a score with a direction: {with_direction or 'none'}",
        )
    return metric, source


def rank_runs(
    stores: Sequence[RunSource],
    *,
    metric: str | None = None,
    directions: Mapping[str, Direction] | None = None,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
    latency: str = "latency_p50_ms",
    tracks: Sequence[TrackMetrics] = (),
) -> ModelRanking:
    """Rank runs of the same dataset by `metric` with paired tests, win rates, Pareto fronts and best-by-metric.

    `metric` None: the experiment's primary metric. `directions` (metric → direction, from the
    evaluator files) say which way each score improves; unknown names fall back to their defaults. `tracks`:
    the run-level metrics of each track, compared as `<track>.<key>` with the direction of `<key>`.
    """
    if directions:
        directions = {**directions, **{f"{t.name}.{k}": d for t in tracks for k, d in directions.items()}}
    runs = _load(stores)
    metric, metric_source = _choose_metric(runs, metric, directions)
    for r in runs:
        r.values = {item_id: row.get(metric) for item_id, row in r.numeric.items()}
    direction = _direction(metric, directions)
    higher = direction != "lower"
    stats = [describe(list(r.values.values()), resamples=resamples, seed=seed, confidence=1 - alpha) for r in runs]
    ranks = _ranks([s.mean for s in stats], higher)
    ranked: list[RankedRun] = []
    for r, s, rank in zip(runs, stats, ranks, strict=True):
        m = r.summary.run_metrics
        cost = _number(m.value("cost_usd_total"))
        ranked.append(
            RankedRun(
                label=r.label,
                run_id=r.store.run_id,
                model=str(r.summary.model),
                items=s.n_total,
                measured=s.n_measured,
                mean=s.mean,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                latency_ms=_number(m.value(latency)),
                cost_usd_per_item=cost / s.n_total if cost is not None and s.n_total else None,
                success_rate=_number(m.value("success_rate")),
                rank=rank,
            )
        )
    order = sorted(range(len(runs)), key=lambda i: (ranks[i] is None, ranks[i] or 0, runs[i].label))
    runs, ranked = [runs[i] for i in order], [ranked[i] for i in order]
    shared_pairs = [(a, b, *_shared(a, b)) for a, b in combinations(runs, 2)]
    first = [
        compare_paired(xb, xa, direction=direction, alpha=alpha, resamples=resamples, seed=seed)
        for _, _, xa, xb, _, _ in shared_pairs
    ]
    raw_p = [c.wilcoxon_p for c in first]

    def at_level(i: int, level: float) -> PairedComparison:
        _, _, xa, xb, _, _ = shared_pairs[i]
        if level == first[i].ci_level:
            return first[i]
        return compare_paired(xb, xa, direction=direction, alpha=alpha, ci_level=level, resamples=resamples, seed=seed)

    pair_results = [
        PairResult(a.label, b.label, shared, unmeasured, c.to_dict(), p, c.verdict)
        for (a, b, _, _, shared, unmeasured), c, p in zip(
            shared_pairs, holm_intervals(raw_p, alpha, at_level), holm(raw_p), strict=True
        )
    ]
    win_rate: dict[str, dict[str, float | None]] = {r.label: {} for r in runs}
    for a in runs:
        for b in runs:
            if a is b:
                win_rate[a.label][b.label] = None
                continue
            xa, xb, _, _ = _shared(a, b)
            wins = sum((x > y) if higher else (x < y) for x, y in zip(xa, xb, strict=True))
            ties = sum(x == y for x, y in zip(xa, xb, strict=True))
            win_rate[a.label][b.label] = (wins + ties / 2) / len(xa) if xa else None
    pareto = {
        "accuracy_vs_latency": pareto_front({r.label: (r.mean, r.latency_ms) for r in ranked}, higher_is_better=higher),
        "accuracy_vs_cost": pareto_front(
            {r.label: (r.mean, r.cost_usd_per_item) for r in ranked}, higher_is_better=higher
        ),
        "latency_metric": latency,
    }
    best_by_metric = _best_by_metric(runs, directions, tracks)
    return ModelRanking(
        metric=metric,
        higher_is_better=higher,
        dataset=str(runs[0].summary.dataset),
        runs=ranked,
        pairs=pair_results,
        win_rate=win_rate,
        pareto=pareto,
        best_by_metric=best_by_metric,
        notes=_notes(runs),
        metric_source=metric_source,
        labels={m: track_label(m, best_by_metric, tracks) for m in best_by_metric},
    )


def _best_by_metric(
    runs: Sequence[_Run], directions: Mapping[str, Direction] | None, tracks: Sequence[TrackMetrics]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    score_keys = sorted(set.intersection(*(set(r.summary.scores) for r in runs)))
    for key in score_keys:
        found = _best(runs, key, lambda r, k=key: _number(r.summary.scores[k].mean), directions)
        if found is not None:
            out[key] = found
    for key in RUN_METRICS_COMPARED:
        found = _best(runs, key, lambda r, k=key: _number(r.summary.run_metrics.value(k)), directions)
        if found is not None:
            out[key] = found
    as_files = [r.summary.to_dict() for r in runs] if tracks else []  # a track reads summary.json as written
    for track in tracks:
        found_in = [track.read(as_file) for as_file in as_files]
        for key in sorted(set.intersection(*(set(metrics) for metrics in found_in))):
            values = {r.label: _number(metrics.get(key)) for r, metrics in zip(runs, found_in, strict=True)}
            found = _best(runs, f"{track.name}.{key}", lambda r, v=values: v[r.label], directions)
            if found is not None:
                out[f"{track.name}.{key}"] = found
    return out


def _notes(runs: Sequence[_Run]) -> list[str]:
    counts = {r.label: len(r.values) for r in runs}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{k}: {v}" for k, v in counts.items())
        return [f"the runs hold different numbers of items ({listed}); each pair compares its shared items only"]
    return []
