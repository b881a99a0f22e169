"""Which production traces `scoregate harvest` proposes, by a stated strategy, and the near-duplicates it drops.

- `lowest`: the traces the file judges scored lowest (`scoregate traces score`): each numeric score is scaled to
  0..1 by its key's range (the evaluator file's, else the traces' lowest and highest) and a trace's place is
  the mean; unscored traces come last;
- `disagreement`: the traces whose judges disagree most: the spread (standard deviation) of its scaled scores;
- `uncovered`: the traces least like any dataset item (rapidfuzz similarity of the mapped input, lowest first);
- `stratified`: a seeded random sample spread evenly over the prompt versions and days of the traces.

Near-duplicates — of an existing item or of a trace proposed before it — are dropped: rapidfuzz's ratio of the
two inputs' canonical JSON text at or above the threshold (0-100).
"""

from __future__ import annotations

import json
import random
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Strategy = Literal["lowest", "disagreement", "uncovered", "stratified"]
STRATEGIES: tuple[Strategy, ...] = ("lowest", "disagreement", "uncovered", "stratified")


@dataclass(frozen=True)
class Candidate:
    """A production trace that may become an item: its mapped, redacted input and what it had."""

    trace_id: str
    timestamp: str
    prompt: str
    input: dict[str, Any]
    metadata: dict[str, Any]
    scores: dict[str, float | str]

    @property
    def text(self) -> str:
        """The input as canonical JSON text, what near-duplicates are measured on."""
        return canonical_text(self.input)


def canonical_text(value: Any) -> str:
    """`value` as JSON text with sorted keys (the same input always reads the same)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _scaled(candidates: Sequence[Candidate], ranges: dict[str, tuple[float, float]]) -> dict[str, list[float]]:
    """Per trace, each numeric score scaled to 0..1: by its key's declared range (the evaluator file's), else by
    the lowest and highest value the traces hold."""
    values: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for c in candidates:
        for key, value in c.scores.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                values[key].append((c.trace_id, float(value)))
    scaled: dict[str, list[float]] = defaultdict(list)
    for key, rows in values.items():
        low, high = ranges.get(key) or (min(v for _, v in rows), max(v for _, v in rows))
        for trace_id, value in rows:
            scaled[trace_id].append((value - low) / (high - low) if high > low else 0.5)
    return scaled


def nearest(text: str, others: Sequence[str]) -> float:
    """The highest rapidfuzz ratio (0-100) of `text` to any of `others`; 0 when there are none."""
    from rapidfuzz import fuzz, process

    found = process.extractOne(text, others, scorer=fuzz.ratio) if others else None
    return float(found[1]) if found else 0.0


def order(
    candidates: Sequence[Candidate],
    strategy: Strategy,
    existing: Sequence[str],
    seed: int,
    ranges: dict[str, tuple[float, float]] | None = None,
) -> list[Candidate]:
    """The candidates in the order the strategy proposes them (unscored traces last for the score strategies)."""
    if strategy == "stratified":
        strata: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
        for c in sorted(candidates, key=lambda c: c.trace_id):
            strata[(c.prompt, c.timestamp[:10])].append(c)
        rng = random.Random(seed)
        for members in strata.values():
            rng.shuffle(members)
        groups = [strata[k] for k in sorted(strata)]
        return [g[i] for i in range(max((len(g) for g in groups), default=0)) for g in groups if i < len(g)]
    if strategy == "uncovered":
        return sorted(candidates, key=lambda c: (nearest(c.text, existing), c.trace_id))
    ranks = _scaled(candidates, ranges or {})
    if strategy == "lowest":
        key = {t: statistics.fmean(r) for t, r in ranks.items()}
        return sorted(candidates, key=lambda c: (c.trace_id not in key, key.get(c.trace_id, 0.0), c.trace_id))
    spread = {t: statistics.pstdev(r) for t, r in ranks.items() if len(r) > 1}
    return sorted(candidates, key=lambda c: (c.trace_id not in spread, -spread.get(c.trace_id, 0.0), c.trace_id))


def drop_near_duplicates(
    ordered: Sequence[Candidate], existing: Sequence[str], threshold: float, count: int
) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The first `count` candidates that are not near-duplicates, and (trace id, why) for those dropped."""
    kept: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    for c in ordered:
        if len(kept) >= count:
            break
        to_items, to_kept = nearest(c.text, existing), nearest(c.text, [k.text for k in kept])
        if to_items >= threshold:
            dropped.append(
                (c.trace_id, f"near-duplicate of a dataset item (similarity {to_items:.0f} ≥ {threshold:g})")
            )
        elif to_kept >= threshold:
            dropped.append(
                (c.trace_id, f"near-duplicate of another proposal (similarity {to_kept:.0f} ≥ {threshold:g})")
            )
        else:
            kept.append(c)
    return kept, dropped
