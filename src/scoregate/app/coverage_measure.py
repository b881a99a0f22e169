"""How well a dataset covers production traffic, from texts alone: each trace's nearest item, and the uncovered
traces grouped into clusters.

A trace is covered when its most similar item reaches the threshold (rapidfuzz `ratio` of the two inputs' JSON
text, 0-100). Texts are compared on their first COMPARED_CHARS characters, in blocks of BLOCK traces against
every item (`rapidfuzz.process.cdist` on every core), so memory stays at one block's matrix of bytes whatever
the traffic. The uncovered traces are grouped greedily: a trace joins the first cluster whose first trace is at
least `cluster_threshold` like it, else starts one; past `max_clusters` clusters a trace joins the nearest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

COMPARED_CHARS = 1000
"""Characters of each input's text compared (the start of a long transcript says what it is about)."""
BLOCK = 1000
"""Traces compared with every item at once."""


@dataclass
class TextCoverage:
    """Per trace its nearest item's similarity, the covered count, and the clusters of uncovered traces."""

    nearest: list[int]
    covered: int
    clusters: list[list[int]] = field(default_factory=list)
    """Trace indexes per cluster, biggest first; each cluster's first index is its example."""


def _clipped(texts: Sequence[str]) -> list[str]:
    return [t[:COMPARED_CHARS] for t in texts]


def coverage_of(
    traces: Sequence[str],
    items: Sequence[str],
    threshold: float,
    *,
    cluster_threshold: float = 60,
    max_clusters: int = 20,
) -> TextCoverage:
    """Measure how many of `traces` have an item of `items` at least `threshold` like them; cluster the rest."""
    import numpy as np
    from rapidfuzz import fuzz, process

    clipped_items = _clipped(items)
    nearest: list[int] = []
    for start in range(0, len(traces), BLOCK):
        block = _clipped(traces[start : start + BLOCK])
        if not clipped_items:
            nearest += [0] * len(block)
            continue
        matrix = process.cdist(block, clipped_items, scorer=fuzz.ratio, dtype=np.uint8, workers=-1)
        nearest += [int(v) for v in matrix.max(axis=1)]
    uncovered = [i for i, similarity in enumerate(nearest) if similarity < threshold]
    leaders: list[str] = []
    clusters: list[list[int]] = []
    for index in uncovered:
        text = traces[index][:COMPARED_CHARS]
        cutoff = cluster_threshold if len(leaders) < max_clusters else 0
        found = process.extractOne(text, leaders, scorer=fuzz.ratio, score_cutoff=cutoff) if leaders else None
        if found is None:
            leaders.append(text)
            clusters.append([index])
        else:
            clusters[found[2]].append(index)
    clusters.sort(key=len, reverse=True)
    return TextCoverage(nearest=nearest, covered=len(traces) - len(uncovered), clusters=clusters)
