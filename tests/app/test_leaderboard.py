"""The leaderboard over constructed runs: best score per item, coverage flag, totals, link, invalid runs skipped."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.app.leaderboard import build_leaderboard
from scoregate.store.records import CallRecord, ItemResult, Score
from scoregate.store.run_store import RunStore
from support.projects import CliResult

ITEMS = ("i1", "i2", "i3", "i4")


def make_run(
    runs_dir: Path,
    run_id: str,
    model: str,
    scores: dict[str, float | None],
    *,
    prompt_version: str = "1",
    status: str = "finished",
    repeat: int = 1,
    extra_repeats: dict[str, float] | None = None,
    usage: tuple[int, int, float | None] = (0, 0, 0.0),
    cached: tuple[int, int] | None = None,
    prompts: tuple[str, ...] = ("p",),
    calls: list[CallRecord] | None = None,
    **manifest_extra: Any,
) -> RunStore:
    """Store a finished run of experiment `exp` on dataset `d` (4 items) with score `q` per item.

    `cached`: the summary's tokens of cache hits (in, out); `calls`: the model calls of each item's record.
    """
    manifest = {
        "run_id": run_id,
        "status": status,
        "started_at": f"2026-01-01T00:00:{len(list(runs_dir.glob('*'))):02d}",
        "options": {"repeat": 2 if extra_repeats else 1},
        "receipts": {
            "experiment": "exp",
            "dataset": {"name": "d", "items": len(ITEMS), "content_hash": "h"},
            "model": {"name": model},
            "prompts": {name: {"version": prompt_version} for name in prompts},
            "composites": {},
        },
        **manifest_extra,
    }
    store = RunStore.create(runs_dir, run_id, manifest)
    for index, (item_id, value) in enumerate(scores.items()):
        result = ItemResult(index, item_id, "p@1", {}, "out", scores=[Score("q", value, "numeric", "ev")])
        result.calls = list(calls or [])
        store.append(result)
    for index, (item_id, value) in enumerate((extra_repeats or {}).items()):
        result = ItemResult(index, item_id, "p@1", {}, "out", scores=[Score("q", value, "numeric", "ev")])
        result.repeat = repeat + 1
        store.append(result)
    store.close()
    tokens_in, tokens_out, cost = usage
    metrics: dict[str, Any] = {"tokens_in_total": tokens_in, "tokens_out_total": tokens_out, "cost_usd_total": cost}
    if cached is not None:
        metrics.update(tokens_in_cached=cached[0], tokens_out_cached=cached[1])
    summary = {"run_id": run_id, "scores": {"q": {"data_type": "numeric", "mean": 0.0}}, "run_metrics": metrics}
    store.write_summary(summary)
    return store


@pytest.fixture
def constructed(tmp_path: Path) -> Path:
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    make_run(runs_dir, "a-full", "m1", dict(zip(ITEMS, (0.5, 0.6, 0.7, 0.8), strict=True)), usage=(100, 50, 0.01))
    make_run(runs_dir, "b-partial", "m1", {"i1": 0.9, "i2": 0.1}, usage=(10, 5, None))
    make_run(runs_dir, "c-one-item", "m2", {"i1": 1.0})
    make_run(runs_dir, "d-invalid", "m3", dict.fromkeys(ITEMS, 1.0), invalidated={"reason": "bad judge"})
    make_run(runs_dir, "e-running", "m3", dict.fromkeys(ITEMS, 1.0), status="running")
    make_run(runs_dir, "f-repeats", "m4", dict.fromkeys(ITEMS, 0.2), extra_repeats=dict.fromkeys(ITEMS, 0.4))
    make_run(runs_dir, "g-v2", "m1", dict(zip(ITEMS, (0.1, None, 0.1, 0.1), strict=True)), prompt_version="2")
    return runs_dir


def test_best_score_per_item_across_runs_and_the_run_with_most_items_as_link(constructed: Path) -> None:
    board = build_leaderboard(constructed)

    entries = {(e["model"], e["prompts"]): e for e in board["entries"]}
    m1 = entries[("m1", "p@1")]
    assert m1["score"] == pytest.approx((0.9 + 0.6 + 0.7 + 0.8) / 4)  # i1 from b, the rest from a
    assert (m1["items_covered"], m1["dataset_items"], m1["low_coverage"]) == (4, 4, False)
    assert m1["best_run"] == "a-full" and m1["runs"] == 2
    assert m1["tokens_total"] == 165 and m1["cost_usd_total"] == 0.01 and m1["cost_unknown_runs"] == 1
    assert entries[("m4", "p@1")]["score"] == pytest.approx(0.4)  # the better repeat of each item
    v2 = entries[("m1", "p@2")]  # another prompt version is another entry; a null is not covered
    assert (v2["items_covered"], v2["score"], v2["low_coverage"]) == (3, pytest.approx(0.1), True)


def test_low_coverage_entries_are_flagged_and_ranked_after_comparable_ones(constructed: Path) -> None:
    board = build_leaderboard(constructed)

    order = [(e["model"], e["prompts"]) for e in board["entries"]]
    assert order == [("m1", "p@1"), ("m4", "p@1"), ("m2", "p@1"), ("m1", "p@2")]
    one = board["entries"][2]
    assert (one["score"], one["items_covered"], one["coverage"], one["low_coverage"]) == (1.0, 1, 0.25, True)
    assert [e["rank"] for e in board["entries"]] == [1, 2, 3, 4]


def test_invalid_and_unfinished_runs_are_skipped_with_the_reason(constructed: Path) -> None:
    board = build_leaderboard(constructed)

    assert {e["model"] for e in board["entries"]} == {"m1", "m2", "m4"}
    reasons = {s["run_id"]: s["reason"] for s in board["skipped"]}
    assert reasons == {"d-invalid": "marked invalidated: bad judge", "e-running": "status running"}


def test_lower_is_better_takes_the_smallest_per_item(constructed: Path) -> None:
    board = build_leaderboard(constructed, lower_is_better=True)

    m1 = next(e for e in board["entries"] if (e["model"], e["prompts"]) == ("m1", "p@1"))
    assert m1["score"] == pytest.approx((0.5 + 0.1 + 0.7 + 0.8) / 4)


def test_cli_writes_leaderboard_json_and_prints_a_table(
    scoregate: Callable[..., CliResult], project_dir: Path, constructed: Path
) -> None:
    (project_dir / "runs").mkdir()
    for run in constructed.iterdir():
        run.rename(project_dir / "runs" / run.name)

    result = scoregate("leaderboard", "--experiment", "exp", "--metric", "q")

    assert result.code == 0, result.output
    board = json.loads((project_dir / "runs" / "leaderboard.json").read_text())
    assert board["metric"] == "q" and len(board["entries"]) == 4
    assert re.search(r"m1\s*│\s*p@1\s*│\s*0\.750\s*│\s*4/4\s*│\s*165\s*│\s*0\.0100\s*│", result.out)
    assert "#1 best run a-full" in result.output
    assert re.search(r"m2\s*│\s*p@1\s*│\s*1\.000\s*│\s*1/4 low", result.out)
    assert "skipped d-invalid: marked invalidated: bad judge" in result.output
    assert "not comparable, ranked last" in result.output


def test_cli_without_runs_says_what_to_do(scoregate: Callable[..., CliResult]) -> None:
    result = scoregate("leaderboard")

    assert result.code == 1
    assert "no finished, valid run" in result.output and "scoregate run EXPERIMENT" in result.output


def test_a_damaged_run_is_skipped_with_the_reason_not_the_whole_board(constructed: Path) -> None:
    (constructed / "b-partial" / "manifest.json").write_text('{"run_id": "b-par', encoding="utf-8")

    board = build_leaderboard(constructed)

    assert {e["model"] for e in board["entries"]} == {"m1", "m2", "m4"}
    reason = next(s["reason"] for s in board["skipped"] if s["run_id"] == "b-partial")
    assert "manifest.json:1:" in reason and "damaged run file" in reason


def test_a_run_whose_receipts_name_no_model_is_skipped_with_the_reason(constructed: Path) -> None:
    path = constructed / "c-one-item" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["receipts"]["model"]
    path.write_text(json.dumps(manifest), encoding="utf-8")

    board = build_leaderboard(constructed)

    assert "m2" not in {e["model"] for e in board["entries"]} and len(board["entries"]) == 3
    reason = next(s["reason"] for s in board["skipped"] if s["run_id"] == "c-one-item")
    assert reason == "its manifest's receipts name no model"


def test_cli_metric_no_run_has_is_an_error_listing_the_scores(
    scoregate: Callable[..., CliResult], project_dir: Path, constructed: Path
) -> None:
    constructed.rename(project_dir / "runs")

    result = scoregate("leaderboard", "--metric", "qq")

    assert result.code == 1, result.output
    assert "has a score 'qq'" in result.output and "name one of: q" in result.output
    assert not (project_dir / "runs" / "leaderboard.json").exists()


def test_cli_leaderboard_file_that_cannot_be_written_is_named(
    scoregate: Callable[..., CliResult], project_dir: Path, constructed: Path
) -> None:
    constructed.rename(project_dir / "runs")
    (project_dir / "runs" / "leaderboard.json").mkdir()

    result = scoregate("leaderboard", "--metric", "q")

    assert result.code == 1, result.output
    assert f"{project_dir / 'runs' / 'leaderboard.json'}: cannot write the leaderboard" in result.output


def test_tokens_answered_from_the_cache_are_not_counted_as_spent(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    full = dict(zip(ITEMS, (0.5, 0.6, 0.7, 0.8), strict=True))
    make_run(runs_dir, "a-fresh", "m1", full, usage=(100, 50, 0.01), cached=(0, 0))
    make_run(runs_dir, "b-all-cached", "m1", full, usage=(100, 50, 0.0), cached=(100, 50))  # a rerun: free
    hit = CallRecord(purpose="task", model="m", endpoint="e", tokens_in=20, tokens_out=5, cost_usd=0.0, cached=True)
    miss = CallRecord(purpose="judge:j", model="m", endpoint="e", tokens_in=3, tokens_out=2, cost_usd=None)
    make_run(runs_dir, "c-older-summary", "m1", full, usage=(4 * 23, 4 * 7, None), calls=[hit, miss])  # no split

    (entry,) = build_leaderboard(runs_dir)["entries"]

    assert entry["tokens_total"] == 150 + 0 + 4 * (3 + 2)  # spent: the fresh run, the older run's misses
    assert entry["tokens_cached_total"] == 150 + 4 * (20 + 5)  # counted apart, from the records when needed
    assert entry["cost_usd_total"] == 0.01 and entry["cost_unknown_runs"] == 1


def test_cli_at_80_columns_keeps_every_identifier_whole_and_says_what_tokens_count(
    scoregate: Callable[..., CliResult], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs_dir = project_dir / "runs"
    runs_dir.mkdir()
    prompts = ("summarization-catchup", "summarization-howto")
    full = dict(zip(ITEMS, (0.5, 0.6, 0.7, 0.8), strict=True))
    version = "local-e75f6452"
    make_run(runs_dir, "a", "scripted", full, prompt_version=version, prompts=prompts, usage=(9035, 1278, None))
    make_run(runs_dir, "b", "scripted", full, prompt_version=version, prompts=prompts,
             usage=(9035, 1278, 0.0), cached=(9035, 1278))  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")

    result = scoregate("leaderboard", "--metric", "q")

    assert result.code == 0, result.out
    printed = re.findall(r"[\w.-]+@[\w.-]+", result.out)
    assert sorted(set(printed)) == [f"{p}@local-e75f6452" for p in prompts]  # never cut mid-token
    assert "@local-e75f6452,summarization" not in result.out
    assert all(len(line) <= 80 for line in result.out.splitlines() if "runs/leaderboard.json" not in line)
    assert "tokens spent 10,313" in result.out or re.search(r"│\s*10,313\s*│", result.out)  # one run's worth
    assert "10,313 tokens of calls answered from the response cache are not counted as spent" in result.output
    assert "#1 cost covers 1 of 2 runs (1 have no known price)" in result.output
