"""How well a dataset covers production traffic, from texts alone: each trace's nearest item, and the uncovered
traces grouped into clusters.

A trace is covered when its most similar item reaches the threshold (rapidfuzz `ratio` of the two inputs' JSON
text, 0-100, on their first COMPARED_CHARS characters). A ratio for every pair would cost 10^7 edit distances at
10,000 traces and 1,000 items, so the items a trace is compared with are chosen first: the CANDIDATES items
nearest by the cosine of their character-trigram counts (hashed into 2^16 columns, one sparse product per block
of BLOCK traces), and the trace's similarity is the best ratio among them. Memory stays at one block's dense
matrix of floats whatever the traffic. The uncovered traces are grouped greedily: a trace joins the first cluster
whose first trace is at least `cluster_threshold` like it, else starts one; past `max_clusters` a trace joins
the nearest cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

COMPARED_CHARS = 1000
"""Characters of each input's text compared (the start of a long transcript says what it is about)."""
BLOCK = 1000
"""Traces whose candidate items are chosen at once."""
CANDIDATES = 5
"""Items per trace whose ratio is computed: the nearest by trigram cosine."""
HASH_BITS = 16


@dataclass
class TextCoverage:
    """Per trace its nearest item's similarity, the covered count, and the clusters of uncovered traces."""

    nearest: list[int]
    covered: int
    clusters: list[list[int]] = field(default_factory=list)
    """Trace indexes per cluster, biggest first; each cluster's first index is its example."""


def _clipped(texts: Sequence[str]) -> list[str]:
    return [t[:COMPARED_CHARS] for t in texts]


def _trigrams(texts: Sequence[str]) -> Any:
    """One L2-normalised row of hashed character-trigram counts per text (a sparse matrix)."""
    import numpy as np
    from scipy import sparse

    rows, cols, counts = [], [], []
    for row, text in enumerate(texts):
        codes = np.frombuffer(text.encode("utf-8", "replace"), dtype=np.uint8).astype(np.int64)
        if len(codes) < 3:
            codes = np.pad(codes, (0, 3 - len(codes)))
        hashed = (codes[:-2] * 65_599 + codes[1:-1] * 257 + codes[2:]) % (1 << HASH_BITS)
        found, many = np.unique(hashed, return_counts=True)
        rows.append(np.full(len(found), row))
        cols.append(found)
        counts.append(many.astype(np.float32))
    matrix = sparse.csr_matrix(
        (np.concatenate(counts), (np.concatenate(rows), np.concatenate(cols))), shape=(len(texts), 1 << HASH_BITS)
    )
    norms = np.sqrt(matrix.multiply(matrix).sum(axis=1)).A.ravel()
    return sparse.diags(1 / np.maximum(norms, 1e-9)) @ matrix


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
    item_vectors = _trigrams(clipped_items).T.tocsc() if clipped_items else None
    take = min(CANDIDATES, len(clipped_items))
    nearest: list[int] = []
    for start in range(0, len(traces), BLOCK):
        block = _clipped(traces[start : start + BLOCK])
        if item_vectors is None:
            nearest += [0] * len(block)
            continue
        cosines = (_trigrams(block) @ item_vectors).toarray()
        chosen = np.argpartition(-cosines, take - 1, axis=1)[:, :take]
        for text, candidates in zip(block, chosen, strict=True):
            nearest.append(round(max(fuzz.ratio(text, clipped_items[c]) for c in candidates)))
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
