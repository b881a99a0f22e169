"""Ranking several runs of one dataset: constructed runs whose ranking, win rates and Pareto fronts are known."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.analysis.model_ranking import rank_runs
from scoregate.analysis.pareto import pareto_front
from scoregate.errors import ScoregateError
from scoregate.store.records import CallRecord, ItemResult, Score
from scoregate.store.run_store import RunStore
from support.projects import CliResult

N = 20


def eqs_a(i: int) -> float:
    return 0.90 + 0.01 * (i % 5)


EQS: dict[str, list[float | None]] = {
    "model-a": [eqs_a(i) for i in range(N)],
    # about 0.1 below A on every item, one item not measured
    "model-b": [None if i == 3 else eqs_a(i) - 0.10 + 0.02 * ((i * 7) % 3 - 1) for i in range(N)],
    # equal to A on even items, 0.01 below on odd ones
    "model-c": [eqs_a(i) - (0.01 if i % 2 else 0.0) for i in range(N)],
}
RUN_METRICS = {
    "model-a": {"latency_p50_ms": 900.0, "cost_usd_total": 0.02, "success_rate": 1.0},
    "model-b": {"latency_p50_ms": 300.0, "cost_usd_total": 0.005, "success_rate": 1.0},
    "model-c": {"latency_p50_ms": 1200.0, "cost_usd_total": 0.01, "success_rate": 1.0},
}
HALLUCINATION = {"model-a": 0.03, "model-b": 0.01, "model-c": 0.05}


def make_run(
    runs_dir: Path, run_id: str, model: str, values: list[float | None], *, dataset: str = "extraction_v1",
    content_hash: str = "h1", extra_item: bool = False, gated: str = "eqs",
) -> RunStore:  # fmt: skip
    """Write a finished run: one result per item with its `eqs` and `words` scores, and a summary.json."""
    gates = [{"name": "latency", "metric": "latency_p95_ms", "op": "<="}, {"name": "g", "metric": gated, "op": ">="}]
    receipts = {"dataset": {"name": dataset, "content_hash": content_hash}, "gates": gates}
    manifest = {"run_id": run_id, "started_at": run_id, "receipts": receipts}
    store = RunStore.create(runs_dir, run_id, manifest)
    ids = [f"item-{i:02d}" for i in range(len(values))] + (["item-extra"] if extra_item else [])
    for index, (item_id, value) in enumerate(zip(ids, [*values, 0.92] if extra_item else values, strict=True)):
        score = (
            Score("eqs", value, "numeric", "extraction_v1")
            if value is not None
            else Score.missing("eqs", "numeric", "extraction_v1", "the output is not valid JSON")
        )
        call = CallRecord("task", model, "http://127.0.0.1/v1", latency_ms=100.0)
        words = Score("words", 100 + index, "numeric", "counters_v1")
        store.append(ItemResult(index, item_id, "extraction@1", {}, {}, scores=[score, words], calls=[call]))
    store.close()
    summary: dict[str, Any] = {
        "run_id": run_id,
        "dataset": dataset,
        "model": model,
        "scores": {"hallucination_rate": {"mean": HALLUCINATION.get(model, 0.0)}},
        "run_metrics": RUN_METRICS.get(model, {}),
        "gates": [],
    }
    store.write_summary(summary)
    return store


@pytest.fixture
def stores(tmp_path: Path) -> list[RunStore]:
    return [
        make_run(tmp_path, "run-b", "model-b", EQS["model-b"]),
        make_run(tmp_path, "run-a", "model-a", EQS["model-a"], extra_item=True),
        make_run(tmp_path, "run-c", "model-c", EQS["model-c"]),
    ]


def test_ranking_pairwise_tests_and_win_rates(stores: list[RunStore]) -> None:
    ranking = rank_runs(stores, resamples=500)

    assert (ranking.metric, ranking.metric_source) == ("eqs", "the experiment's primary metric (its first gated score)")
    assert [(r.rank, r.label) for r in ranking.runs] == [(1, "model-a"), (2, "model-c"), (3, "model-b")]
    a = ranking.runs[0]
    assert a.measured == a.items == N + 1 and a.cost_usd_per_item == pytest.approx(0.02 / (N + 1))
    assert ranking.runs[2].measured == N - 1
    pairs = {(p.candidate, p.baseline): p for p in ranking.pairs}
    assert list(pairs) == [("model-a", "model-c"), ("model-a", "model-b"), ("model-c", "model-b")]
    ab = pairs[("model-a", "model-b")]
    diffs = [x - y for x, y in zip(EQS["model-a"], EQS["model-b"], strict=True) if y is not None]
    assert (ab.shared_items, ab.unmeasured, ab.comparison["n"]) == (N, 1, N - 1)
    assert ab.comparison["diff"] == pytest.approx(sum(diffs) / len(diffs))
    assert ab.comparison["cohens_dz"] > 0 and ab.comparison["wins"] == N - 1
    assert ab.verdict == "better" and ab.p_holm is not None and ab.p_holm >= ab.comparison["wilcoxon_p"]
    assert ab.comparison["diff_ci_low"] > 0  # the verdict follows the printed, Holm-adjusted interval
    for p in ranking.pairs:  # step-down levels: the first pair at 1 − 0.05/3, none below 95%
        assert p.comparison["ci_level"] >= 0.95
        low, high = p.comparison["diff_ci_low"], p.comparison["diff_ci_high"]
        assert p.verdict == ("better" if low > 0 else "worse" if high < 0 else "inconclusive")
    ac = pairs[("model-a", "model-c")]
    assert (ac.comparison["wins"], ac.comparison["ties"], ac.comparison["losses"]) == (10, 10, 0)

    w = ranking.win_rate
    assert w["model-a"]["model-b"] == 1.0 and w["model-b"]["model-a"] == 0.0
    assert w["model-a"]["model-c"] == 0.75 and w["model-c"]["model-a"] == 0.25  # 10 wins, 10 ties of 20
    assert w["model-c"]["model-b"] == 1.0 and w["model-a"]["model-a"] is None
    assert ranking.notes and "different numbers of items" in ranking.notes[0]


def test_pareto_fronts_and_best_by_metric(stores: list[RunStore]) -> None:
    ranking = rank_runs(stores, resamples=200)

    # C is slower and less accurate than A: dominated. B is fastest, A most accurate.
    assert ranking.pareto["accuracy_vs_latency"]["frontier"] == ["model-b", "model-a"]
    # Per item: B 0.00025 < C 0.0005 < A 0.00095, accuracy rising with cost: nobody is dominated.
    assert ranking.pareto["accuracy_vs_cost"]["frontier"] == ["model-b", "model-c", "model-a"]
    best = ranking.best_by_metric
    assert best["hallucination_rate"]["best"] == ["model-b"] and best["hallucination_rate"]["higher_is_better"] is False
    assert best["latency_p50_ms"]["best"] == ["model-b"] and best["cost_usd_total"]["value"] == 0.005
    assert best["success_rate"]["best"] == ["model-a", "model-c", "model-b"]  # a tie lists every run, ranked
    markdown = ranking.to_markdown()
    assert "| 1 | model-a |" in markdown and "accuracy_vs_latency: model-b, model-a" in markdown


def test_the_metric_defaults_to_the_gated_score_and_an_unknown_one_lists_the_choices(tmp_path: Path) -> None:
    runs = [make_run(tmp_path, f"r{i}", m, EQS[m], gated="words") for i, m in enumerate(EQS)]
    assert rank_runs(runs, directions={"words": "higher"}, resamples=100).metric == "words"
    with pytest.raises(ScoregateError, match="unknown --metric 'nope'") as error:
        rank_runs(runs, metric="nope", resamples=100)
    assert "eqs, words" in str(error.value.hint)
    with pytest.raises(ScoregateError, match="words has no direction"):
        rank_runs(runs, directions={"words": "none"}, resamples=100)
    ranking = rank_runs(runs, metric="eqs", directions={"words": "none", "success_rate": "none"}, resamples=100)
    assert "success_rate" not in ranking.best_by_metric and "latency_p50_ms" in ranking.best_by_metric


def test_pareto_front_by_hand() -> None:
    points = {
        "fast": (0.70, 100.0),
        "good": (0.90, 800.0),
        "worse": (0.85, 900.0),
        "tied": (0.90, 800.0),
        "x": (None, 1.0),
    }
    front = pareto_front(points)
    assert front == {"frontier": ["fast", "good", "tied"], "not_measured": ["x"]}


def test_runs_of_different_datasets_or_unfinished_runs_are_refused(tmp_path: Path) -> None:
    a = make_run(tmp_path, "r1", "model-a", EQS["model-a"])
    other = make_run(tmp_path, "r2", "model-b", EQS["model-b"], dataset="sgd_v1", content_hash="h2")
    changed = make_run(tmp_path, "r3", "model-c", EQS["model-c"], content_hash="h9")
    with pytest.raises(ScoregateError, match="not of the same dataset"):
        rank_runs([a, other])
    with pytest.raises(ScoregateError, match="not of the same dataset"):
        rank_runs([a, changed])
    with pytest.raises(ScoregateError, match="at least two runs"):
        rank_runs([a])
    (other.directory / "summary.json").unlink()
    with pytest.raises(ScoregateError, match=r"r2 has no summary\.json"):
        rank_runs([a, other])


def test_two_runs_of_one_model_are_told_apart_by_run_id(tmp_path: Path) -> None:
    first = make_run(tmp_path, "r1", "model-a", EQS["model-a"])
    second = make_run(tmp_path, "r2", "model-a", EQS["model-c"])
    ranking = rank_runs([first, second], resamples=200)
    assert [r.label for r in ranking.runs] == ["model-a (r1)", "model-a (r2)"]


TIED_MODELS = ("gpt-4o-mini", "claude-haiku", "local", "llama-3-8b", "qwen-2.5-7b")


def test_runs_tied_at_one_rank_are_named_once_not_under_every_metric(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for model in TIED_MODELS:
        monkeypatch.setitem(RUN_METRICS, model, {"latency_p50_ms": 500.0, "cost_usd_total": 0.0, "success_rate": 1.0})
        make_run(project_dir / "runs", f"run-{model}", model, [0.9] * N)
    make_run(project_dir / "runs", "run-b", "model-b", [0.8] * N)  # behind on eqs; faster, dearer, same success
    run_ids = [*(f"run-{m}" for m in TIED_MODELS), "run-b"]

    result = scoregate("rank", *run_ids)
    ranking = rank_runs([RunStore.open(project_dir / "runs", r) for r in run_ids], resamples=200)

    assert result.code == 0, result.output
    runs_table = result.out[: result.out.index("pairwise")]
    assert all(re.search(rf"^1\. {re.escape(m)}$", runs_table, re.M) for m in TIED_MODELS), runs_table  # shared rank
    after = result.out[result.out.index("pareto") :]
    assert not any(m in after for m in TIED_MODELS), after  # the tie is named, not its every run again
    assert re.search(r"│ hallucination_rate +│ the 5 runs tied at rank 1 +│ +0% │", after), after
    assert re.search(r"│ cost_usd_total +│ the 5 runs tied at rank 1 +│", after), after
    assert re.search(r"│ success_rate +│ all 6 runs +│ +100% │", after), after
    assert re.search(r"│ latency_p50_ms +│ model-b +│", after), after
    assert "pareto accuracy_vs_latency: all 6 runs" in after
    table = ranking.to_markdown()
    assert (
        "| success_rate | all 6 runs | 1.000 |" in table and "| cost_usd_total | the 5 runs tied at rank 1 |" in table
    )
    assert ranking.best_by_metric["cost_usd_total"]["best"] == sorted(TIED_MODELS)  # the data keeps every name


def test_a_zero_difference_reads_0_without_a_sign_in_the_pairwise_table(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_run(project_dir / "runs", "run-a", "model-a", EQS["model-a"])
    make_run(project_dir / "runs", "run-a2", "model-c", EQS["model-a"])  # the same values: Δ 0 on every item
    make_run(project_dir / "runs", "run-b", "model-b", EQS["model-b"])

    for columns in ("80", "160"):
        monkeypatch.setenv("COLUMNS", columns)
        result = scoregate("rank", "run-a", "run-a2", "run-b")

        assert result.code == 0, result.output
        pairs = result.out[result.out.index("pairwise") : result.out.index("win rate")]
        assert re.search(r"Δ 0 +95% CI \[0, 0\]", pairs) or re.search(r"│ +0 │ \[0, 0\] 95% +│", pairs), pairs
        assert not re.search(r"[+-]0(?![.\d])", pairs), pairs  # no signed zero anywhere
        assert re.search(r"\+0\.1\b", pairs), pairs  # a non-zero difference keeps its sign
