"""Consistency across repeats (`run --repeat K`): output agreement, per-score spread, pass@k and pass^k.

- exact-match agreement: an item agrees when its K outputs are identical (JSON compared with sorted keys);
  `modal_agreement_mean` is the mean share of an item's repeats that give its most common output;
- per-score standard deviation: the sample std (ddof=1) of an item's measured values across repeats,
  averaged over items with at least two measured repeats;
- for 0/1 scores (boolean, or numeric with every value 0 or 1), over items measured in all K repeats:
  pass@k = share of items passed at least once in K tries, pass^k = share passed in all K tries.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from scoregate.store.records import DataType, ItemResult


def _output_key(result: ItemResult) -> str:
    if result.error is not None and result.output is None:
        return "\x00error"
    return json.dumps(result.output, sort_keys=True, ensure_ascii=False, default=str)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, str):
        return None
    return float(value)


def consistency(results: Iterable[ItemResult], repeats: int, columns: list[tuple[str, DataType]]) -> dict[str, Any]:
    """Return the consistency section of a repeated run's summary."""
    by_item: dict[str, dict[int, ItemResult]] = {}
    failed = 0
    for result in results:
        by_item.setdefault(result.item_id, {})[result.repeat] = result
        failed += result.error is not None
    complete = {item: reps for item, reps in by_item.items() if len(reps) == repeats}
    agreement = []
    for reps in complete.values():
        counts = Counter(_output_key(r) for r in reps.values())
        agreement.append(counts.most_common(1)[0][1] / repeats)
    out: dict[str, Any] = {
        "k": repeats,
        "items": len(by_item),
        "items_complete": len(complete),
        "failed_records": failed,
        "exact_match_rate": sum(a == 1.0 for a in agreement) / len(agreement) if agreement else None,
        "modal_agreement_mean": sum(agreement) / len(agreement) if agreement else None,
        "scores": {},
    }
    for key, data_type in columns:
        if data_type in ("text", "categorical"):
            continue
        values = {
            item: [v for r in reps.values() if (s := r.score(key)) is not None and (v := _number(s.value)) is not None]
            for item, reps in by_item.items()
        }
        spreads = [statistics.stdev(vals) for vals in values.values() if len(vals) >= 2]
        stats: dict[str, Any] = {
            "std_mean": round(sum(spreads) / len(spreads), 6) if spreads else None,
            "std_max": round(max(spreads), 6) if spreads else None,
            "items_measured": len(spreads),
        }
        measured = [v for vals in values.values() for v in vals]
        binary = bool(measured) and (data_type == "boolean" or all(v in (0.0, 1.0) for v in measured))
        if binary:
            full = [vals for vals in values.values() if len(vals) == repeats]
            stats["pass_at_k"] = sum(any(v == 1.0 for v in vals) for vals in full) / len(full) if full else None
            stats["pass_hat_k"] = sum(all(v == 1.0 for v in vals) for vals in full) / len(full) if full else None
            stats["items_all_repeats"] = len(full)
        out["scores"][key] = stats
    return out


def consistency_metrics(section: dict[str, Any]) -> dict[str, float]:
    """Flatten the consistency section into MLflow metric names (`repeat_...`)."""
    metrics: dict[str, float] = {"repeat_k": float(section["k"])}
    for name in ("exact_match_rate", "modal_agreement_mean"):
        if section.get(name) is not None:
            metrics[f"repeat_{name}"] = float(section[name])
    for key, stats in section.get("scores", {}).items():
        for stat in ("std_mean", "std_max", "pass_at_k", "pass_hat_k"):
            if stats.get(stat) is not None:
                metrics[f"repeat_{key}_{stat}"] = float(stats[stat])
    return metrics
