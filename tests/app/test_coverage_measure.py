"""The coverage measure: nearest item per trace across blocks, and clusters of the uncovered traces."""

from __future__ import annotations

import pytest

from scoregate.app import coverage_measure
from scoregate.app.coverage_measure import coverage_of


def test_each_trace_gets_its_nearest_item_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coverage_measure, "BLOCK", 2)
    items = ["reset my password", "cancel my plan"]
    traces = ["reset my password", "cancel my plan!", "where is the invoice", "where is my invoice", "zzz"]
    measured = coverage_of(traces, items, 90)
    assert measured.nearest[:2] == [100, 97]
    assert measured.covered == 2
    assert [sorted(c) for c in measured.clusters] == [[2, 3], [4]]


def test_past_the_cluster_limit_a_trace_joins_the_nearest_cluster() -> None:
    traces = ["alpha one", "beta two", "gamma three", "alpha one!"]
    measured = coverage_of(traces, [], 90, cluster_threshold=95, max_clusters=2)
    assert measured.covered == 0
    assert sorted(len(c) for c in measured.clusters) == [1, 3] or sorted(len(c) for c in measured.clusters) == [2, 2]
    assert len(measured.clusters) == 2


def test_no_items_covers_nothing() -> None:
    assert coverage_of(["a", "b"], [], 50).covered == 0


def test_the_candidates_chosen_by_trigrams_give_the_exact_covered_count() -> None:
    import random

    import numpy as np
    from rapidfuzz import fuzz, process

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 7))) for _ in range(400)]
    items = [" ".join(rng.choice(words) for _ in range(40)) for _ in range(120)]
    traces = []
    for n in range(300):
        base = rng.choice(items).split() if n % 2 else [rng.choice(words) for _ in range(40)]
        base[rng.randrange(len(base))] = rng.choice(words)
        traces.append(" ".join(base))
    exact = process.cdist(traces, items, scorer=fuzz.ratio, dtype=np.uint8).max(axis=1)
    measured = coverage_of(traces, items, 90)
    assert measured.covered == int((exact >= 90).sum()) == 150
