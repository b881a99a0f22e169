"""Slice gates: a regression gate compared per slice (Holm across slices) fails when one slice regresses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from scoregate.analysis.paired import compare_paired, holm
from scoregate.analysis.slices import PairedItem, compare_slices
from scoregate.app.run.slice_gates import evaluate_slice_gate
from scoregate.catalog.config_models import GateSpec
from scoregate.store.records import ItemResult, Score
from scoregate.store.run_store import RunStore
from support.compare_runs import manifest
from support.regression_runs import catchup, promotions

PROMPT = "summarization-catchup"
METRIC = "WeightedQuality"
FEEDS = {"devtools": 12, "security": 12, "data": 12, "cloud": 3}
WOBBLE = [0.1, -0.1, 0.2, -0.2, 0.0, 0.15, -0.15, 0.05, -0.05, 0.1, -0.1, 0.0]


def base_value(i: int) -> float:
    """The reference run's score of item i (spread 2.5 to 4.5)."""
    return 2.5 + (i * 7 % 9) / 4


def items() -> list[tuple[str, str, int]]:
    """(item id, feed, index within the feed), in dataset order."""
    rows = []
    for feed, n in FEEDS.items():
        rows += [(f"{feed}-{k:02d}", feed, k) for k in range(n)]
    return rows


def store_run(root: Path, run_id: str, value: Any, *, version: str, day: int) -> RunStore:
    """Store a run of the catch-up prompt at `version` whose item (id, feed, k) scores `value(i, feed, k)`."""
    m = manifest(run_id, prompts=catchup(version), started_at=f"2026-01-{day:02d}T00:00:00+00:00")
    store = RunStore.create(root / "runs", run_id, m)
    for i, (item_id, feed, k) in enumerate(items()):
        result = ItemResult(
            index=i, item_id=item_id, prompt=f"{PROMPT}@{version}",
            input={"title": item_id, "feed_category": feed}, output="summary",
            metadata={"episode_kind": "news" if k % 2 else "interview"},
        )  # fmt: skip
        result.scores.append(Score(METRIC, value(i, feed, k), "numeric", "ev_quality_v1"))
        store.append(result)
    store.close()
    return store


def gate(**fields: Any) -> GateSpec:
    """A regression gate on WeightedQuality against production with margin 0.2."""
    spec = {"name": "no_regression", "metric": METRIC, "op": ">=", "threshold": 0, "stat": "paired_noninferiority",
            "compare_to": "production", "margin": 0.2, **fields}  # fmt: skip
    return GateSpec.model_validate(spec)


def judge(root: Path, current: RunStore, spec: GateSpec) -> Any:
    """Evaluate the gate for `current` in the project at `root`."""
    return evaluate_slice_gate(
        spec, current, project_root=root, runs_dir=root / "runs", min_coverage=0.8, confidence=0.95,
        resamples=500, seed=0,
    )  # fmt: skip


def one_feed_regresses(i: int, feed: str, k: int) -> float:
    """The candidate: +0.6 on every feed but security, which loses 1.0 (the mean still improves)."""
    return base_value(i) + (-1.0 if feed == "security" else 0.6) + WOBBLE[k % len(WOBBLE)]


def test_a_gate_fails_when_one_slice_regresses_although_the_mean_improves(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    store_run(tmp_path, "prod", lambda i, f, k: base_value(i), version="3", day=1)
    current = store_run(tmp_path, "cand", one_feed_regresses, version="4", day=2)

    whole = judge(tmp_path, current, gate())
    sliced = judge(tmp_path, current, gate(slices=["feed_category"]))

    assert whole.status == "pass" and whole.slices is None  # the mean improves: the plain gate passes
    assert sliced.status == "fail"
    assert sliced.slices is not None
    rows = {row.value: row for row in sliced.slices}
    assert set(rows) == {"cloud", "data", "devtools", "security"}
    assert rows["security"].status == "fail" and rows["security"].verdict == "worse"
    assert rows["security"].ci_high < -0.2
    assert {rows[f].status for f in ("data", "devtools")} == {"pass"}
    assert rows["cloud"].status == "too_small" and rows["cloud"].n == 3 and rows["cloud"].diff is None
    assert "1 slice worse by more than the margin 0.2: feed_category=security (n=12)" in sliced.detail
    assert "1 slice too small to test (< 10 paired items): feed_category=cloud (n=3)" in sliced.detail


def test_no_slice_regressing_keeps_the_whole_run_verdict_and_the_table(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    store_run(tmp_path, "prod", lambda i, f, k: base_value(i), version="3", day=1)
    current = store_run(tmp_path, "cand", lambda i, f, k: base_value(i) + 0.3 + WOBBLE[k % 12], version="4", day=2)

    result = judge(tmp_path, current, gate(slices=["feed_category", "metadata.episode_kind"], min_slice_items=4))

    assert result.status == "pass"
    names = [f"{row.field}={row.value}" for row in result.slices]
    assert names == [
        "feed_category=cloud", "feed_category=data", "feed_category=devtools", "feed_category=security",
        "metadata.episode_kind=interview", "metadata.episode_kind=news",
    ]  # fmt: skip
    assert [row.status for row in result.slices] == ["too_small"] + ["pass"] * 5
    assert "5 slices tested (Holm across them)" in result.detail


def test_slices_are_one_holm_family_as_compare_adjusts_secondary_scores() -> None:
    rows = [PairedItem({"feed": feed}, base_value(i), one_feed_regresses(i, feed, k))
            for i, (_, feed, k) in enumerate(items())]  # fmt: skip

    results = compare_slices(rows, ["feed"], margin=0.2, min_items=10, resamples=500)

    tested = [r for r in results if r.status != "too_small"]
    raw = []
    for r in tested:
        members = [row for row in rows if row.slices["feed"] == r.value]
        raw.append(compare_paired([m.reference for m in members], [m.candidate for m in members]).wilcoxon_p)
    assert [r.p_holm for r in tested] == pytest.approx(holm(raw))
    levels = [r.ci_level for r in tested]  # widened at Holm's step-down levels: the smallest p at 1 − α/3
    assert max(levels) == pytest.approx(1 - 0.05 / 3) and min(levels) >= 0.95  # type: ignore[type-var]


def test_slices_need_a_regression_gate() -> None:
    with pytest.raises(ValidationError, match=r"`slices:` applies only to a regression gate"):
        GateSpec.model_validate({"name": "g", "metric": METRIC, "op": ">=", "threshold": 4, "slices": ["feed"]})
    with pytest.raises(ValidationError, match="names a field twice"):
        gate(slices=["feed", "feed"])
    with pytest.raises(ValidationError, match="greater than or equal to 2"):
        gate(slices=["feed"], min_slice_items=1)


def test_each_slice_becomes_an_mlflow_metric_set_and_a_langfuse_run_score(tmp_path: Path) -> None:
    from scoregate.sinks.langfuse.score_mapping import run_scores
    from scoregate.sinks.mlflow.readable import readable_metrics
    from scoregate.store.record import RunSummary

    promotions(tmp_path, (PROMPT, "promote", 3))
    store_run(tmp_path, "prod", lambda i, f, k: base_value(i), version="3", day=1)
    current = store_run(tmp_path, "cand", one_feed_regresses, version="4", day=2)
    gate_result = judge(tmp_path, current, gate(slices=["feed_category"]))
    gates = [gate_result.to_dict()]
    summary = RunSummary.model_validate(
        {"run_id": current.run_id, "scores": {}, "run_metrics": {}, "gates": gates, "verdict": "fail"}
    )

    metrics = readable_metrics(summary)
    posts = {p.name: p for p in run_scores(summary, None)}

    assert metrics["slice.no_regression.feed_category.security.pass"] == 0.0
    assert metrics["slice.no_regression.feed_category.security.n"] == 12.0
    assert metrics["slice.no_regression.feed_category.devtools.pass"] == 1.0
    assert math.isnan(metrics["slice.no_regression.feed_category.cloud.pass"])  # too small: not a pass, not a fail
    security = posts["slice.no_regression.feed_category=security"]
    assert (security.value, security.data_type) == ("fail", "CATEGORICAL")
    assert security.comment is not None and security.comment.startswith("n=12, worse, Δ -1")
    assert posts["slice.no_regression.feed_category=cloud"].value == "too_small"
