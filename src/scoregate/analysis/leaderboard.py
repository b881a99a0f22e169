"""The leaderboard across stored runs: one entry per dataset, model and prompt version, best score per item.

Rules (from the benchmark teams' practice):
- an item that ran several times (several runs, or repeats) counts once, with its best score;
- an entry's score is the mean of those best scores over the items it covered;
- coverage is items covered / items in the dataset, and an entry under `min_coverage` is flagged
  (1/15 items is not comparable to 15/15) and ranked after every comparable entry;
- tokens and cost are what the entry's runs spent: calls answered from the response cache cost nothing and
  their tokens are counted apart (`tokens_cached_total`); the entry links to the run that covered most items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scoregate.analysis.run_source import RunSource
from scoregate.errors import ScoregateError


@dataclass
class _Entry:
    dataset: str
    model: str
    prompts: str
    dataset_items: int = 0
    best: dict[str, float] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    started: dict[str, str] = field(default_factory=dict)
    tokens: int | None = None
    tokens_cached: int = 0
    cost_usd: float | None = None
    cost_unknown_runs: int = 0


def default_metric(summary: dict[str, Any], receipts: dict[str, Any]) -> str | None:
    """The metric a run is ranked by when none is asked for: its first composite, else its first numeric score."""
    composites = list(receipts.get("composites") or {})
    if composites and composites[0] in summary["scores"]:
        return composites[0]
    for key, stats in summary["scores"].items():
        if stats.get("data_type") in ("numeric", "boolean"):
            return str(key)
    return None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


def _cached_tokens(store: RunSource, metrics: dict[str, Any]) -> int:
    """Tokens (in + out) of the run's calls answered from the cache; counted from its results when the summary
    predates `tokens_in_cached`."""
    if "tokens_in_cached" in metrics:
        return int(metrics["tokens_in_cached"] or 0) + int(metrics.get("tokens_out_cached") or 0)
    return sum(
        (call.tokens_in or 0) + (call.tokens_out or 0)
        for result in store.iter_results()
        for call in result.calls
        if call.cached and call.error is None
    )


def _add_usage(entry: _Entry, store: RunSource, summary: dict[str, Any]) -> None:
    """Add what the run spent: tokens of uncached calls (cached ones apart) and its cost (cached calls are free)."""
    metrics = summary.get("run_metrics", {})
    tokens_in, tokens_out = metrics.get("tokens_in_total"), metrics.get("tokens_out_total")
    if tokens_in is not None and tokens_out is not None:
        cached = _cached_tokens(store, metrics)
        entry.tokens = (entry.tokens or 0) + tokens_in + tokens_out - cached
        entry.tokens_cached += cached
    cost = metrics.get("cost_usd_total")
    if cost is None:
        entry.cost_unknown_runs += 1
    else:
        entry.cost_usd = (entry.cost_usd or 0.0) + cost


def leaderboard_of(
    candidates: Sequence[tuple[RunSource, dict[str, Any], dict[str, Any]]],
    skipped: Sequence[dict[str, str]] = (),
    *,
    source: str,
    experiment: str | None = None,
    metric: str | None = None,
    lower_is_better: bool = False,
    min_coverage: float = 0.8,
) -> dict[str, Any]:
    """Return the leaderboard over valid runs: (run, manifest, summary) each, read item by item.

    `skipped`: the runs already left out, with why; `source` names where the runs are (for the errors).
    """
    skipped = list(skipped)
    if metric is None:
        metric = next((m for _s, man, summ in candidates if (m := default_metric(summ, man["receipts"]))), None)
    where = f" of experiment {experiment!r}" if experiment else ""
    if metric is None:
        raise ScoregateError(
            f"no finished, valid run{where} with a numeric score in {source}",
            hint="run an experiment first (`scoregate run EXPERIMENT`), or name the score with --metric",
        )
    if not any(metric in summary["scores"] for _s, _m, summary in candidates):
        known = sorted({key for _s, _m, summary in candidates for key in summary["scores"]})
        raise ScoregateError(
            f"no finished, valid run{where} in {source} has a score {metric!r}",
            hint=f"name one of: {', '.join(known)}"
            if known
            else "run an experiment first (`scoregate run EXPERIMENT`)",
        )
    entries: dict[tuple[str, str, str], _Entry] = {}
    better = (lambda new, old: new < old) if lower_is_better else (lambda new, old: new > old)
    for store, manifest, summary in candidates:
        if metric not in summary["scores"]:
            skipped.append({"run_id": store.run_id, "reason": f"no score {metric!r}"})
            continue
        receipts = manifest["receipts"]
        prompts = ",".join(f"{n}@{p['version']}" for n, p in sorted(receipts["prompts"].items()))
        key = (receipts["dataset"]["name"], receipts["model"]["name"], prompts)
        entry = entries.setdefault(key, _Entry(*key))
        entry.dataset_items = max(entry.dataset_items, int(receipts["dataset"]["items"]))
        covered: set[str] = set()
        for result in store.iter_all_records():
            score = result.score(metric)
            value = _number(score.value) if score is not None else None
            if value is None:
                continue
            covered.add(result.item_id)
            old = entry.best.get(result.item_id)
            if old is None or better(value, old):
                entry.best[result.item_id] = value
        entry.runs[store.run_id] = len(covered)
        entry.started[store.run_id] = manifest.get("started_at", "")
        _add_usage(entry, store, summary)
    rows = [_row(e, min_coverage) for e in entries.values()]
    rows.sort(key=lambda r: (r["low_coverage"], r["score"] is None, _order(r["score"], lower_is_better)))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "metric": metric,
        "direction": "lower" if lower_is_better else "higher",
        "experiment": experiment,
        "min_coverage": min_coverage,
        "entries": rows,
        "skipped": skipped,
    }


def _order(score: float | None, lower_is_better: bool) -> float:
    if score is None:
        return 0.0
    return score if lower_is_better else -score


def _row(entry: _Entry, min_coverage: float) -> dict[str, Any]:
    covered = len(entry.best)
    coverage = covered / entry.dataset_items if entry.dataset_items else 0.0
    link = max(entry.runs, key=lambda run_id: (entry.runs[run_id], entry.started[run_id]))
    return {
        "dataset": entry.dataset,
        "model": entry.model,
        "prompts": entry.prompts,
        "score": round(sum(entry.best.values()) / covered, 6) if covered else None,
        "items_covered": covered,
        "dataset_items": entry.dataset_items,
        "coverage": round(coverage, 4),
        "low_coverage": coverage < min_coverage,
        "tokens_total": entry.tokens,
        "tokens_cached_total": entry.tokens_cached,
        "cost_usd_total": entry.cost_usd,
        "cost_unknown_runs": entry.cost_unknown_runs,
        "runs": len(entry.runs),
        "run_ids": sorted(entry.runs),
        "best_run": link,
    }
