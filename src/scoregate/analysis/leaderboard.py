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

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from scoregate.analysis.run_source import RunSource
from scoregate.errors import ScoregateError
from scoregate.support.key_digests import DIGEST_DTYPE, key_digest

if TYPE_CHECKING:
    from scoregate.store.record import Manifest, Receipts, RunMetrics, RunSummary


@dataclass
class _Entry:
    dataset: str
    model: str
    prompts: str
    dataset_items: int = 0
    items: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=DIGEST_DTYPE))
    """The digests of the items covered, sorted (16 bytes each, not an id string and a dict slot)."""
    best: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Each covered item's best score, aligned with `items`."""
    runs: dict[str, int] = field(default_factory=dict)
    started: dict[str, str] = field(default_factory=dict)
    tokens: int | None = None
    tokens_cached: int = 0
    cost_usd: float | None = None
    cost_unknown_runs: int = 0


def default_metric(summary: RunSummary, receipts: Receipts) -> str | None:
    """The metric a run is ranked by when none is asked for: its first composite, else its first numeric score."""
    composites = list(receipts.composites or {})
    if composites and composites[0] in summary.scores:
        return str(composites[0])
    for key, stats in summary.scores.items():
        if stats.data_type in ("numeric", "boolean"):
            return key
    return None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


def _cached_tokens(store: RunSource, metrics: RunMetrics) -> int:
    """Tokens (in + out) of the run's calls answered from the cache; counted from its results when the summary
    predates `tokens_in_cached`."""
    if metrics.has("tokens_in_cached"):
        return int(metrics.value("tokens_in_cached") or 0) + int(metrics.value("tokens_out_cached") or 0)
    return sum(
        (call.tokens_in or 0) + (call.tokens_out or 0)
        for result in store.iter_results()
        for call in result.calls
        if call.cached and call.error is None
    )


def _add_usage(entry: _Entry, store: RunSource, summary: RunSummary) -> None:
    """Add what the run spent: tokens of uncached calls (cached ones apart) and its cost (cached calls are free)."""
    metrics = summary.run_metrics
    tokens_in, tokens_out = metrics.value("tokens_in_total"), metrics.value("tokens_out_total")
    if tokens_in is not None and tokens_out is not None:
        cached = _cached_tokens(store, metrics)
        entry.tokens = (entry.tokens or 0) + int(tokens_in + tokens_out) - cached
        entry.tokens_cached += cached
    cost = metrics.value("cost_usd_total")
    if cost is None:
        entry.cost_unknown_runs += 1
    else:
        entry.cost_usd = (entry.cost_usd or 0.0) + cost


def leaderboard_of(
    candidates: Sequence[tuple[RunSource, Manifest, RunSummary]],
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
        metric = next((m for _s, man, summ in candidates if (m := default_metric(summ, man.receipts))), None)
    where = f" of experiment {experiment!r}" if experiment else ""
    if metric is None:
        raise ScoregateError(
            f"no finished, valid run{where} with a numeric score in {source}",
            hint="run an experiment first (`scoregate run EXPERIMENT`), or name the score with --metric",
        )
    if not any(metric in summary.scores for _s, _m, summary in candidates):
        known = sorted({key for _s, _m, summary in candidates for key in summary.scores})
        raise ScoregateError(
            f"no finished, valid run{where} in {source} has a score {metric!r}",
            hint=f"name one of: {', '.join(known)}"
            if known
            else "run an experiment first (`scoregate run EXPERIMENT`)",
        )
    entries: dict[tuple[str, str, str], _Entry] = {}
    for store, manifest, summary in candidates:
        if metric not in summary.scores:
            skipped.append({"run_id": store.run_id, "reason": f"no score {metric!r}"})
            continue
        receipts = manifest.receipts
        dataset, model = receipts.dataset, receipts.model
        if dataset is None or model is None:  # every run scoregate writes names both: a hand-edited manifest
            missing = "dataset" if dataset is None else "model"
            skipped.append({"run_id": store.run_id, "reason": f"its manifest's receipts name no {missing}"})
            continue
        prompts = ",".join(f"{n}@{version}" for n, version in sorted(receipts.prompt_versions().items()))
        key = (dataset.name, str(model.name), prompts)
        entry = entries.setdefault(key, _Entry(*key))
        entry.dataset_items = max(entry.dataset_items, int(dataset.items or 0))
        digests, values = bytearray(), array("d")
        for result in store.iter_all_records():
            score = result.score(metric)
            value = _number(score.value) if score is not None else None
            if value is not None:
                digests += key_digest(result.item_id)
                values.append(value)
        items, best = _best_per_item(
            np.frombuffer(digests, dtype=DIGEST_DTYPE), np.frombuffer(values, dtype=np.float64), lower_is_better
        )
        entry.runs[store.run_id] = len(items)
        if entry.items.size:  # another run of the entry: the best of both per item
            items, best = _best_per_item(
                np.concatenate([entry.items, items]), np.concatenate([entry.best, best]), lower_is_better
            )
        entry.items, entry.best = items, best
        entry.started[store.run_id] = manifest.started_at or ""
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


def _best_per_item(items: np.ndarray, values: np.ndarray, lower_is_better: bool) -> tuple[np.ndarray, np.ndarray]:
    """One entry per distinct item, with its best value (an item that ran several times counts once); sorted."""
    order = np.lexsort((values if lower_is_better else -values, items))  # by item, the best value first
    ordered = items[order]
    first = np.ones(items.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    kept = order[first]
    return items[kept], values[kept]


def _order(score: float | None, lower_is_better: bool) -> float:
    if score is None:
        return 0.0
    return score if lower_is_better else -score


def _row(entry: _Entry, min_coverage: float) -> dict[str, Any]:
    covered = int(entry.items.size)
    coverage = covered / entry.dataset_items if entry.dataset_items else 0.0
    link = max(entry.runs, key=lambda run_id: (entry.runs[run_id], entry.started[run_id]))
    return {
        "dataset": entry.dataset,
        "model": entry.model,
        "prompts": entry.prompts,
        "score": round(math.fsum(entry.best.tolist()) / covered, 6) if covered else None,
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
