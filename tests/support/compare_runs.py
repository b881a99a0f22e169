"""Constructed runs for `compare`: a run folder written by hand, a manifest, two small runs, the compare CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import typer

import scoregate.cli as scoregate_cli
from scoregate.cli import compare_cmd, run_cmd
from scoregate.store.records import DataType, ItemResult, Score
from scoregate.store.run_store import RunStore
from support.projects import CliResult

DATASET_HASH = "d" * 64


def manifest(run_id: str, **overrides: Any) -> dict[str, Any]:
    """A finished run's manifest with complete receipts; keyword overrides replace receipt entries or options."""
    receipts: dict[str, Any] = {
        "tool_version": "0.0-test",
        "git": {"commit": None, "dirty": None},
        "config_hash": "c" * 64,
        "project": "compare-test",
        "experiment": "hardcases",
        "dataset": {"name": "hardcases", "content_hash": DATASET_HASH, "items": 0},
        "prompts": {"summarization-catchup": {"version": "1", "labels": [], "temperature": None, "max_tokens": None}},
        "model": {"name": "scripted", "provider": "openai", "model": "m", "endpoint": "http://x", "temperature": None,
                  "max_tokens": None},
        "judge_model": {"name": "scripted", "provider": "openai", "model": "judge-1", "endpoint": "http://x",
                        "temperature": None, "max_tokens": None},
        "evaluators": {"ev_quality_v1": {"kind": "llm_judge", "version": 1, "file_hash": "e" * 64}},
        "composites": {},
        "gates": [{"name": "hallucinations", "metric": "hallucination_count", "op": "<=", "threshold": 1,
                   "stat": "every_item"}],
        "gates_hash": "g" * 64,
    }  # fmt: skip
    options = {"limit": None, "concurrency": 2, "cache": True}
    status = overrides.pop("status", "finished")
    started_at = overrides.pop("started_at", "2026-01-01T00:00:00+00:00")
    options.update(overrides.pop("options", {}))
    receipts.update(overrides)
    return {"run_id": run_id, "status": status, "started_at": started_at, "options": options, "receipts": receipts}


def write_run(
    runs_dir: Path,
    run_id: str,
    scores: Mapping[str, Mapping[str, Any]],
    *,
    outputs: Mapping[str, Any] | None = None,
    summary: bool = True,
    prompt: str = "summarization-catchup@1",
    score_evaluators: Mapping[str, str] | None = None,
    **overrides: Any,
) -> RunStore:
    """Store a run whose item `id` has the numeric scores `scores[id]` (None = not measured) and output text;
    `score_evaluators` names the evaluator of a score (default ev_quality_v1)."""
    store = RunStore.create(runs_dir, run_id, manifest(run_id, **overrides))
    for index, (item_id, values) in enumerate(scores.items()):
        result = ItemResult(
            index=index,
            item_id=item_id,
            prompt=prompt,
            input={"title": f"episode {item_id}", "transcript": f"transcript of {item_id}", "desired_style": "catchup"},
            output=(outputs or {}).get(item_id, f"summary of {item_id} by {run_id}"),
        )
        for name, value in values.items():
            data_type: DataType = (
                "categorical" if isinstance(value, str) else "boolean" if isinstance(value, bool) else "numeric"
            )
            reason = "judge reply is not JSON" if value is None else None
            result.scores.append(
                Score(name, value, data_type, (score_evaluators or {}).get(name, "ev_quality_v1"), reason=reason)
            )
        store.append(result)
    store.close()
    if summary:
        store.write_summary({"run_id": run_id, "scores": {}, "run_metrics": {"items": len(scores)}, "gates": [],
                             "verdict": "no_gates"})  # fmt: skip
    return store


# ---------------------------------------------------------------- end to end: two scripted runs, the CLI
@pytest.fixture
def cli(scoregate: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., CliResult]]:
    """The `scoregate` fixture with `run` and `compare` registered (as `scoregate.cli` registers them)."""
    app = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
    app.command("run")(run_cmd.run)
    app.command("compare")(compare_cmd.compare)
    monkeypatch.setattr(scoregate_cli, "app", app)
    yield scoregate


# ---------------------------------------------------------------- MLflow
def small_runs(runs_dir: Path) -> tuple[RunStore, RunStore]:
    """Runs A and B over 6 items (one score null in B, with its reason)."""
    a = write_run(runs_dir, "small-a", {f"i{k}": {"quality": k % 3 + 1, "category": "news"} for k in range(6)})
    b_scores = {f"i{k}": {"quality": (k * 2) % 5 + 1 if k else None, "category": "tools"} for k in range(6)}
    return a, write_run(runs_dir, "small-b", b_scores)
