"""Measurement integrity in summaries, and `scoregate runs invalidate` honoured by every command that trusts a run."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from scoregate.app.comparison import CompareOptions, compare_stored_runs
from scoregate.app.hardcases import add_hardcases
from scoregate.app.invalidation import invalidate_run
from scoregate.app.promotion import PromotionRefused, promote
from scoregate.app.ranking import rank_stored_runs
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.errors import ScoregateError
from scoregate.store.invalidation import INVALIDATION_FILE
from support.fake_langfuse import FakeLangfuse, fake_langfuse_fixture  # noqa: F401
from support.projects import CliResult, Runs
from support.promotion_runs import PROMPT, logged_run, project  # noqa: F401
from support.regression_runs import BASE, Gate, gate_of, promotions, run

INTEGRITY = {"value", "reason", "coverage", "samples_measured", "samples_skipped"}


def test_every_summary_metric_carries_its_integrity_fields_and_the_run_a_coverage_block(
    project_dir: Path, scripted_server: Any
) -> None:
    scripted_server.judge_score = 9  # outside the judges' 1-5 range: every judge score is null with the reason
    outcome = run_experiment(
        project_dir, "smoke", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    )
    scores = outcome.summary["scores"]
    for key, stats in scores.items():
        assert set(stats) >= INTEGRITY, key
        assert stats["value"] is not None or stats["reason"], key
        assert stats["samples_measured"] + stats["samples_skipped"] == stats["n_total"] == 6
    faith = scores["faithfulness_score"]
    assert faith["value"] is None and faith["samples_skipped"] == 6 and faith["coverage"] == 0
    assert faith["reason"] == "judge replied 9, outside 1-5"
    assert scores["word_count"]["value"] == scores["word_count"]["mean"] and scores["word_count"]["reason"] is None
    assert outcome.summary["coverage"] == {
        "samples_total": 6, "samples_with_output": 6, "samples_with_gold": 0, "gold_coverage": 0.0,
    }  # fmt: skip


@pytest.fixture
def two_runs(
    project_dir: Path, scoregate: Callable[..., CliResult], runs: Runs, fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch, mlflow_store: str,
) -> tuple[str, str]:  # fmt: skip
    """Two runs of `counters` mirrored to MLflow; the first also mirrored to the fake Langfuse afterwards."""
    ids = []
    for _ in range(2):
        result = scoregate("run", "counters")
        assert result.code == 0, result.output
        ids.append(runs.latest())
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)
    synced = scoregate("langfuse-sync", ids[0])
    assert synced.code == 0, synced.output
    return ids[0], ids[1]


def test_invalidate_marks_the_store_mlflow_and_langfuse_and_listings_show_it(
    two_runs: tuple[str, str], project_dir: Path, scoregate: Callable[..., CliResult], runs: Runs,
    fake_langfuse: FakeLangfuse,
) -> None:  # fmt: skip
    old, new = two_runs
    result = scoregate("runs", "invalidate", old, "--reason", "gold labels had duplicates", "--superseded-by", new)
    assert result.code == 0, result.output
    assert "local store" in result.out and "mlflow: run" in result.out and "langfuse:" in result.out
    record = json.loads((project_dir / "runs" / old / INVALIDATION_FILE).read_text())
    assert record["valid"] is False and record["superseded_by"] == new
    assert record["invalid_reason"] == "gold labels had duplicates" and record["invalidated_at"]
    summary = runs.summary(old)
    assert (summary["valid"], summary["invalid_reason"], summary["superseded_by"]) == (
        False, "gold labels had duplicates", new,
    )  # fmt: skip
    mlflow_run_id = json.loads((project_dir / "runs" / old / "links.json").read_text())["mlflow_run_id"]
    tags = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"]).get_run(mlflow_run_id).data.tags
    assert tags["scoregate.valid"] == "false" and tags["scoregate.invalid_reason"] == "gold labels had duplicates"
    assert tags["scoregate.superseded_by"] == new
    (mark,) = [s for s in fake_langfuse.state.scores if s.get("name") == "run_valid"]
    assert mark["value"] == "invalid" and mark["metadata"]["superseded_by"] == new
    assert fake_langfuse.validation_failures == []
    listing = scoregate("runs", "list")
    (line,) = [row for row in listing.out.splitlines() if old in row]
    assert "invalid" in line
    shown = scoregate("runs", "show", old)
    assert f"INVALID: gold labels had duplicates; superseded by {new}" in shown.output


def test_invalidate_refuses_bad_input(two_runs: tuple[str, str], scoregate: Callable[..., CliResult]) -> None:
    old, new = two_runs
    assert "no run 'nope'" in scoregate("runs", "invalidate", old, "--reason", "x", "--superseded-by", "nope").output
    assert (
        "cannot supersede itself"
        in scoregate("runs", "invalidate", old, "--reason", "x", "--superseded-by", old).output
    )
    assert "--reason is empty" in scoregate("runs", "invalidate", old, "--reason", " ").output
    assert scoregate("runs", "invalidate", new, "--reason", "bad").code == 0
    refused = scoregate("runs", "invalidate", old, "--reason", "x", "--superseded-by", new)
    assert refused.code == 1 and f"run {new} is itself invalid" in refused.output


@pytest.fixture
def invalid_and_valid(project_dir: Path) -> tuple[str, str]:
    """Two local runs of `counters`; the first invalidated, superseded by the second."""
    options = RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})))
    old = run_experiment(project_dir, "counters", options).run_id
    new = run_experiment(project_dir, "counters", options).run_id
    invalidate_run(project_dir, old, "judge prompt bug", superseded_by=new)
    return old, new


def test_compare_refuses_an_invalid_run(invalid_and_valid: tuple[str, str], project_dir: Path) -> None:
    old, new = invalid_and_valid
    with pytest.raises(ScoregateError) as refused:
        compare_stored_runs(project_dir, new, old, CompareOptions(no_mirror=frozenset({"mlflow"})))
    assert f"cannot compare run {old}: it was invalidated" in refused.value.message
    assert "judge prompt bug; superseded by" in refused.value.message and refused.value.hint == f"use {new} instead"


def test_rank_refuses_an_invalid_run(invalid_and_valid: tuple[str, str], project_dir: Path) -> None:
    old, new = invalid_and_valid
    with pytest.raises(ScoregateError, match=f"cannot rank run {old}: it was invalidated"):
        rank_stored_runs(project_dir, [new, old], metric="word_count")


def test_hardcases_refuse_an_invalid_run(invalid_and_valid: tuple[str, str], project_dir: Path) -> None:
    old, _ = invalid_and_valid
    with pytest.raises(ScoregateError, match=f"cannot take hard cases from run {old}: it was invalidated"):
        add_hardcases(project_dir, old, "word_count > 0")


def test_the_regression_gate_skips_an_invalid_baseline_saying_so(tmp_path: Path) -> None:
    promotions(tmp_path, (PROMPT, "promote", 3))
    run(tmp_path, "prod-old", BASE, version="3", day=1)
    run(tmp_path, "prod", BASE, version="3", day=2)
    current = run(tmp_path, "cand", BASE, version="4", day=3)
    assert "vs production run prod " in gate_of(tmp_path, current).detail
    invalidate_run(tmp_path, "prod", "scored with a broken judge")
    assert "vs production run prod-old " in gate_of(tmp_path, current).detail  # the older valid run instead
    invalidate_run(tmp_path, "prod-old", "same broken judge")
    result = gate_of(tmp_path, current, Gate())
    assert result.status == "incomplete"
    assert "prod: invalidated" in result.detail and "scored with a broken judge" in result.detail


def test_promotion_skips_an_invalidated_run_as_evidence(project: Path) -> None:  # noqa: F811
    logged_run(project, "counters")
    outcome = run_experiment(
        project, "smoke", RunOptions(mirrors=RunOptions.Mirrors(off=frozenset({"langfuse"})), use_cache=False)
    )
    invalidate_run(project, outcome.run_id, "the smoke set was mislabelled")
    with pytest.raises(PromotionRefused) as refused:
        promote(project, PROMPT, version=2, dry_run=True)
    assert "was invalidated: the smoke set was mislabelled" in refused.value.message


def test_a_run_invalidated_before_it_finished_is_mirrored_invalid_by_its_resume(
    project_dir: Path, scoregate: Callable[..., CliResult], runs: Runs, fake_langfuse: FakeLangfuse,
    monkeypatch: pytest.MonkeyPatch, mlflow_store: str,
) -> None:  # fmt: skip
    assert scoregate("run", "counters", "--no-mlflow").code == 0  # Langfuse is not configured yet
    run_id = runs.latest()
    directory = project_dir / "runs" / run_id
    lines = (directory / "results.jsonl").read_bytes().splitlines(keepends=True)
    (directory / "results.jsonl").write_bytes(b"".join(lines[:3]))  # killed after three items: no summary
    (directory / "summary.json").unlink()
    manifest = runs.manifest(run_id)
    started = {**manifest["options"], "mirrors_off": []}  # as a run started with MLflow on, killed before its mirror
    (directory / "manifest.json").write_text(
        json.dumps({**manifest, "status": "interrupted", "options": started}), encoding="utf-8"
    )
    marked = scoregate("runs", "invalidate", run_id, "--reason", "the judge saw the gold labels")
    assert marked.code == 0 and "the run was not mirrored" in marked.output
    for name, value in fake_langfuse.env().items():
        monkeypatch.setenv(name, value)

    resumed = scoregate("run", "--resume", run_id)  # its first mirrors, to MLflow and Langfuse

    assert resumed.code in (0, 3), resumed.output
    assert runs.summary(run_id)["valid"] is False
    mlflow_run_id = json.loads((directory / "links.json").read_text())["mlflow_run_id"]
    tags = MlflowClient(tracking_uri=mlflow_store).get_run(mlflow_run_id).data.tags
    assert (tags.get("scoregate.valid"), tags.get("scoregate.invalid_reason")) == (
        "false", "the judge saw the gold labels",
    )  # fmt: skip
    (mark,) = [s for s in fake_langfuse.state.scores if s["name"] == "run_valid"]
    assert (mark["value"], mark["comment"]) == ("invalid", "the judge saw the gold labels")


def test_a_finished_run_invalidated_before_its_first_mlflow_sync_is_mirrored_invalid(
    project_dir: Path, scoregate: Callable[..., CliResult], runs: Runs, mlflow_store: str
) -> None:
    assert scoregate("run", "counters", "--no-mlflow").code == 0
    run_id = runs.latest()
    assert scoregate("runs", "invalidate", run_id, "--reason", "wrong dataset version").code == 0

    assert scoregate("mlflow-sync", run_id).code == 0

    mlflow_run_id = json.loads((project_dir / "runs" / run_id / "links.json").read_text())["mlflow_run_id"]
    tags = MlflowClient(tracking_uri=mlflow_store).get_run(mlflow_run_id).data.tags
    assert (tags.get("scoregate.valid"), tags.get("scoregate.invalid_reason")) == ("false", "wrong dataset version")
