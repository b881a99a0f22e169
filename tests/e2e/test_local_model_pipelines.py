"""The shipped two-stage pipeline (fixture and live) and `--repeat` through the real embedded local model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.local_model import MISSING, REPO, free_port, scoregate, stop_server

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(bool(MISSING), reason=f"the local model needs {' and '.join(MISSING)} (`make setup`)"),
]
PROMPTS = ("facts-extract", "summary-from-facts")
EVALUATORS = ("facts_checks_v1", "summary_checks_v1")


def write_project(root: Path) -> None:
    """The shipped facts_v1 dataset, both stage prompts (shorter replies), their evaluators, both experiments."""
    for folder in ("prompts", "evaluators", "datasets"):
        (root / folder).mkdir(parents=True)
    for name in PROMPTS:
        prompt = yaml.safe_load((REPO / "prompts" / f"{name}.yaml").read_text(encoding="utf-8"))
        prompt["config"]["max_tokens"] = 80
        (root / "prompts" / f"{name}.yaml").write_text(yaml.safe_dump(prompt), encoding="utf-8")
    for name in EVALUATORS:
        shutil.copy(REPO / "evaluators" / f"{name}.yaml", root / "evaluators" / f"{name}.yaml")
    for suffix in ("jsonl", "yaml"):
        shutil.copy(REPO / "datasets" / f"facts_v1.{suffix}", root / "datasets" / f"facts_v1.{suffix}")
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))["experiments"]
    config = {
        "project": "local-model-pipelines",
        "settings": {"model": "local", "judge_model": "local", "concurrency": 1, "bootstrap_resamples": 100},
        "models": {"local": {"provider": "local", "model": "smollm2-135m", "timeout_s": 120, "max_retries": 1}},
        "experiments": {name: shipped[name] for name in ("facts_summary", "facts_summary_live")},
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


@pytest.fixture(scope="module")
def local_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project on the real local model, served on a free port for this module."""
    root = tmp_path_factory.mktemp("pipelines") / "project"
    write_project(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCOREGATE_LOCAL_PORT", str(free_port()))
        patch.setenv("COLUMNS", "250")
        patch.delenv("SCOREGATE_DEBUG", raising=False)
        served = scoregate(root, "model", "serve", timeout=150)
        assert served.returncode == 0, served.stderr
        try:
            yield root
        finally:
            stop_server(root)


def latest_records(root: Path, experiment: str) -> tuple[Path, list[dict[str, Any]]]:
    runs = [p for p in (root / "runs").iterdir() if p.is_dir() and p.name.startswith(experiment + "-2")]
    run_dir = max(runs, key=lambda p: json.loads((p / "manifest.json").read_text())["started_at"])
    return run_dir, [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_fixture_pipeline_with_two_repeats_on_the_local_model(local_project: Path) -> None:
    ran = scoregate(local_project, "run", "facts_summary", "--limit", "1", "--repeat", "2", "--no-mlflow", timeout=400)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_dir, records = latest_records(local_project, "facts_summary")
    assert sorted(r["repeat"] for r in records) == [1, 2]
    for record in records:
        assert record["error"] is None and record["output"].strip()
        assert record["stages"]["facts"]["output"].strip()
        assert [c["purpose"] for c in record["calls"]] == ["stage:facts", "task"]
        assert all(c["tokens_out"] > 0 and not c["cached"] for c in record["calls"])
        scores = {s["name"]: s["value"] for s in record["scores"]}
        assert scores["facts.list_word_count"] > 0 and scores["summary_word_count"] > 0
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["repeats"]["k"] == 2 and summary["repeats"]["items_complete"] == 1
    assert summary["repeats"]["exact_match_rate"] in (0.0, 1.0)
    assert summary["stages"]["facts"]["calls"] == summary["stages"]["summary"]["calls"] == 1  # repeat 1
    rows = json.loads((run_dir / "metrics.json").read_text())["rows"]
    assert [r["stage"] for r in rows[:1]] == ["model_check"]  # the run's one-token check, then the items' calls
    rows = rows[1:]
    assert len(rows) == 4 and {r["stage"] for r in rows} == {"facts", "summary"}
    assert all(r["provider"] == "local" and r["tokens_total"] > 0 and r["cost_usd"] == 0.0 for r in rows)


def test_live_pipeline_on_the_local_model(local_project: Path) -> None:
    ran = scoregate(local_project, "run", "facts_summary_live", "--limit", "1", "--no-mlflow", timeout=400)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_dir, (record,) = latest_records(local_project, "facts_summary_live")
    assert record["error"] is None and record["output"].strip()
    assert [c["purpose"] for c in record["calls"]] == ["stage:facts", "task"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["receipts"]["pipeline_mode"] == "live"
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["status"] == "finished" and set(progress["stages"]) == {"facts", "summary"}
