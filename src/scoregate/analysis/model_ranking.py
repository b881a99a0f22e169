"""Rank several runs of one dataset (one per model): ranking, paired tests, win rates, Pareto fronts, best-by-metric.

Runs are paired by item id; only items measured in both runs of a pair are compared, and how many were left
out is reported. The ranking metric defaults to the extraction EQS; any per-item score works.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from scoregate.analysis.paired import compare_paired, holm
from scoregate.analysis.stats import describe
from scoregate.errors import ScoregateError
from scoregate.invalidation import refuse_invalid
from scoregate.store import RunStore

LOWER_IS_BETTER = frozenset(
    {
        "hallucination_rate",
        "omission_rate",
        "hallucination_count",
        "parse_failure_rate",
        "schema_failure_rate",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "latency_mean_ms",
        "cost_usd_total",
        "cost_usd_per_item",
        "error_count",
        "retries_total",
    }
)
"""Metrics where a smaller value is better (by name, with or without an `extraction.` prefix)."""
RUN_METRICS_COMPARED = ("success_rate", "latency_p50_ms", "latency_p95_ms", "latency_mean_ms", "cost_usd_total")


def lower_is_better(metric: str) -> bool:
    """True when a smaller value of `metric` is better."""
    return metric.removeprefix("extraction.") in LOWER_IS_BETTER


@dataclass(frozen=True)
class RankedRun:
    """One run in the ranking; `rank` is None when its metric was not measured (1 = best; ties share a rank)."""

    label: str
    run_id: str
    model: str
    items: int
    measured: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    latency_ms: float | None
    cost_usd_per_item: float | None
    success_rate: float | None
    rank: int | None


@dataclass(frozen=True)
class PairResult:
    """Candidate (the better-ranked run) against baseline on their shared measured items; Holm across pairs."""

    candidate: str
    baseline: str
    shared_items: int
    unmeasured: int
    comparison: dict[str, Any]
    p_holm: float | None
    significantly_different: bool


@dataclass
class ModelRanking:
    """Everything `scoregate rank` shows; `to_dict()` is JSON-ready."""

    metric: str
    higher_is_better: bool
    dataset: str
    runs: list[RankedRun]
    pairs: list[PairResult]
    win_rate: dict[str, dict[str, float | None]]
    """win_rate[row][column]: share of shared items where row beats column (ties count half)."""
    pareto: dict[str, Any]
    best_by_metric: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form."""
        return asdict(self)

    def to_markdown(self) -> str:
        """Return the ranking, pairwise tests, Pareto fronts and best-by-metric as Markdown tables."""
        fmt = _fmt
        lines = [f"## Ranking by {self.metric} ({'higher' if self.higher_is_better else 'lower'} is better)", ""]
        lines += ["| rank | model | mean | 95% CI | measured | latency ms | cost/item | success |", "|" + "---|" * 8]
        for r in self.runs:
            ci = f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]"
            lines.append(
                f"| {r.rank or '-'} | {r.label} | {fmt(r.mean)} | {ci} | {r.measured}/{r.items} | "
                f"{fmt(r.latency_ms, 0)} | {fmt(r.cost_usd_per_item, 6)} | {fmt(r.success_rate)} |"
            )
        head = "| candidate | baseline | n | diff | 95% CI | p (Holm) | Cohen's dz | verdict |"
        lines += ["", "## Pairwise (candidate − baseline)", "", head, "|" + "---|" * 8]
        for p in self.pairs:
            c = p.comparison
            lines.append(
                f"| {p.candidate} | {p.baseline} | {p.shared_items} | {fmt(c['diff'])} | "
                f"[{fmt(c['diff_ci_low'])}, {fmt(c['diff_ci_high'])}] | {fmt(p.p_holm)} | {fmt(c['cohens_dz'])} | "
                f"{'significant' if p.significantly_different else 'not significant'} |"
            )
        labels = [r.label for r in self.runs]
        lines += ["", "## Win rate (row beats column)", "", "| | " + " | ".join(labels) + " |"]
        lines.append("|" + "---|" * (len(labels) + 1))
        lines += [f"| {a} | " + " | ".join(fmt(self.win_rate[a][b]) for b in labels) + " |" for a in labels]
        lines += ["", "## Pareto fronts", ""]
        for name in ("accuracy_vs_latency", "accuracy_vs_cost"):
            lines.append(f"- {name}: {', '.join(self.pareto[name]['frontier']) or 'none'}")
        lines += ["", "## Best by metric", "", "| metric | best | value |", "|---|---|---|"]
        lines += [f"| {m} | {', '.join(b['best'])} | {fmt(b['value'])} |" for m, b in self.best_by_metric.items()]
        return "\n".join(lines + [f"\n> {n}" for n in self.notes]) + "\n"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str) or not math.isfinite(float(value)):
        return None
    return float(value)


@dataclass
class _Run:
    store: RunStore
    summary: dict[str, Any]
    values: dict[str, float | None]
    label: str = ""


def _load(stores: Sequence[RunStore], metric: str) -> list[_Run]:
    if len(stores) < 2:
        raise ScoregateError("ranking needs at least two runs", hint="pass two or more run ids")
    runs = []
    for store in stores:
        summary = store.summary
        if summary is None:
            raise ScoregateError(
                f"run {store.run_id} has no summary.json (unfinished?)", hint="resume it with `scoregate run --resume`"
            )
        values: dict[str, float | None] = {}
        for result in store.iter_results():
            score = result.score(metric)
            values[result.item_id] = _number(score.value) if score is not None else None
        runs.append(_Run(store, summary, values))
    datasets = {(r.summary.get("dataset"), _dataset_hash(r.store)) for r in runs}
    if len(datasets) > 1:
        seen = ", ".join(f"{r.store.run_id}: {r.summary.get('dataset')}" for r in runs)
        raise ScoregateError(
            f"the runs are not of the same dataset (content): {seen}",
            hint="rank runs of one experiment's dataset, e.g. those of `scoregate run EXPERIMENT --models a,b,c`",
        )
    models = [str(r.summary.get("model")) for r in runs]
    for r, model in zip(runs, models, strict=True):
        r.label = model if models.count(model) == 1 else f"{model}@{r.store.run_id}"
    return runs


def _dataset_hash(store: RunStore) -> str | None:
    dataset = store.manifest.get("receipts", {}).get("dataset", {})
    return dataset.get("content_hash") if isinstance(dataset, dict) else None


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


def _dominates(p: tuple[float, float], q: tuple[float, float]) -> bool:
    """p = (accuracy, cost) dominates q: no worse on both (higher accuracy, lower cost), better on one."""
    return p[0] >= q[0] and p[1] <= q[1] and (p[0] > q[0] or p[1] < q[1])


def pareto_front(
    points: Mapping[str, tuple[float | None, float | None]], *, higher_is_better: bool = True
) -> dict[str, Any]:
    """Return the labels on the accuracy-vs-cost frontier (cheapest first) and those left out for lack of data."""
    known = {k: (a if higher_is_better else -a, c) for k, (a, c) in points.items() if a is not None and c is not None}
    frontier = [k for k, p in known.items() if not any(_dominates(q, p) for o, q in known.items() if o != k)]
    frontier.sort(key=lambda k: (known[k][1], -known[k][0]))
    return {"frontier": frontier, "not_measured": sorted(set(points) - set(known))}


def _best(runs: Sequence[_Run], metric: str, read: Any) -> dict[str, Any] | None:
    values = {r.label: read(r) for r in runs}
    measured = {k: v for k, v in values.items() if v is not None}
    if not measured:
        return None
    lower = lower_is_better(metric)
    target = min(measured.values()) if lower else max(measured.values())
    best = [k for k, v in measured.items() if v == target]
    return {"best": best, "value": target, "higher_is_better": not lower, "measured_runs": len(measured)}


def rank_runs(
    stores: Sequence[RunStore],
    *,
    metric: str = "eqs",
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
    latency: str = "latency_p50_ms",
) -> ModelRanking:
    """Rank runs of the same dataset by `metric` with paired tests, win rates, Pareto fronts and best-by-metric."""
    runs = _load(stores, metric)
    higher = not lower_is_better(metric)
    stats = [describe(list(r.values.values()), resamples=resamples, seed=seed, confidence=1 - alpha) for r in runs]
    ranks = _ranks([s.mean for s in stats], higher)
    ranked: list[RankedRun] = []
    for r, s, rank in zip(runs, stats, ranks, strict=True):
        m = r.summary.get("run_metrics", {})
        cost = _number(m.get("cost_usd_total"))
        ranked.append(
            RankedRun(
                label=r.label,
                run_id=r.store.run_id,
                model=str(r.summary.get("model")),
                items=s.n_total,
                measured=s.n_measured,
                mean=s.mean,
                ci_low=s.ci_low,
                ci_high=s.ci_high,
                latency_ms=_number(m.get(latency)),
                cost_usd_per_item=cost / s.n_total if cost is not None and s.n_total else None,
                success_rate=_number(m.get("success_rate")),
                rank=rank,
            )
        )
    order = sorted(range(len(runs)), key=lambda i: (ranks[i] is None, ranks[i] or 0, runs[i].label))
    runs, ranked = [runs[i] for i in order], [ranked[i] for i in order]
    pairs, raw_p = [], []
    for a, b in combinations(runs, 2):
        xa, xb, shared, unmeasured = _shared(a, b)
        comparison = compare_paired(xb, xa, higher_is_better=higher, alpha=alpha, resamples=resamples, seed=seed)
        pairs.append((a.label, b.label, shared, unmeasured, comparison))
        raw_p.append(comparison.wilcoxon_p)
    adjusted = holm(raw_p)
    pair_results = [
        PairResult(a, b, shared, unmeasured, c.to_dict(), p, p is not None and p < alpha)
        for (a, b, shared, unmeasured, c), p in zip(pairs, adjusted, strict=True)
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
    return ModelRanking(
        metric=metric,
        higher_is_better=higher,
        dataset=str(runs[0].summary.get("dataset")),
        runs=ranked,
        pairs=pair_results,
        win_rate=win_rate,
        pareto=pareto,
        best_by_metric=_best_by_metric(runs),
        notes=_notes(runs),
    )


def _best_by_metric(runs: Sequence[_Run]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    score_keys = sorted(set.intersection(*(set(r.summary.get("scores", {})) for r in runs)))
    for key in score_keys:
        found = _best(runs, key, lambda r, k=key: _number(r.summary["scores"][k].get("mean")))
        if found is not None:
            out[key] = found
    for key in RUN_METRICS_COMPARED:
        found = _best(runs, key, lambda r, k=key: _number(r.summary.get("run_metrics", {}).get(k)))
        if found is not None:
            out[key] = found
    if all("extraction" in r.summary for r in runs):
        micro = sorted(set.intersection(*(set(r.summary["extraction"].get("metrics", {})) for r in runs)))
        for key in micro:
            name = f"extraction.{key}"
            found = _best(runs, name, lambda r, k=key: _number(r.summary["extraction"]["metrics"].get(k)))
            if found is not None:
                out[name] = found
    return out


def _notes(runs: Sequence[_Run]) -> list[str]:
    counts = {r.label: len(r.values) for r in runs}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{k}: {v}" for k, v in counts.items())
        return [f"the runs hold different numbers of items ({listed}); each pair compares its shared items only"]
    return []


def rank_stored_runs(root: Path, run_ids: Sequence[str], *, metric: str = "eqs") -> ModelRanking:
    """Open runs by id in the project's run store and rank them (the `scoregate rank` entry point)."""
    if len(run_ids) < 2:
        raise ScoregateError("ranking needs at least two runs", hint="pass two or more run ids")
    stores = [RunStore.open(root / "runs", run_id) for run_id in run_ids]
    for store in stores:
        refuse_invalid(store, "rank")
    return rank_runs(stores, metric=metric)
