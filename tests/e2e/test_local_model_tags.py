"""The tags track through the real embedded local model: `scoregate run tags --limit 2`."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.tracks.tags.metrics import METRIC_KEYS
from support.local_model import MISSING, stop_server

REPO = Path(__file__).resolve().parents[2]
SCOREGATE = Path(sys.executable).parent / "scoregate"

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        bool(MISSING), reason=f"the local model needs {' and '.join(MISSING)} (install with `make setup`)"
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_project(root: Path, experiment: str, files: dict[str, list[str]]) -> None:
    """The shipped files of one experiment on the local model, gates included."""
    for folder, names in files.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(REPO / folder / name, root / folder / name)
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    spec = shipped["experiments"][experiment]
    config = {
        "project": f"local-{experiment}-test",
        "settings": {"model": "local", "judge_model": "local", "concurrency": 1, "bootstrap_resamples": 100},
        "models": {"local": {"provider": "local", "model": "smollm2-135m", "timeout_s": 120, "max_retries": 1}},
        "gates": [g for g in shipped["gates"] if g["name"] in spec.get("gates", [])],
        "experiments": {experiment: spec},
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def scoregate(root: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCOREGATE), *args, "-C", str(root)], capture_output=True, text=True, timeout=timeout, check=False
    )


def run_on_local_model(root: Path, monkeypatch: pytest.MonkeyPatch, experiment: str) -> tuple[Path, Any]:
    """Serve the local model, run two items of `experiment`, stop the server; return the run dir and summary."""
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(free_port()))
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("SCOREGATE_DEBUG", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST"):
        monkeypatch.delenv(name, raising=False)
    served = scoregate(root, "model", "serve", timeout=150)
    try:
        assert served.returncode == 0, served.stderr
        ran = scoregate(root, "run", experiment, "--limit", "2", "--no-mlflow", "--no-langfuse", timeout=500)
        assert "Traceback" not in ran.stderr, ran.stderr
    finally:
        stop_server(root)
    (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "finished", ran.stderr
    return run_dir, json.loads((run_dir / "summary.json").read_text())


def test_a_tags_run_through_the_real_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    write_project(
        root,
        "tags",
        {
            "prompts": ["tags-annotator.yaml"],
            "evaluators": ["tags_v1.yaml"],
            "datasets": ["support_calls_v1.jsonl", "support_calls_v1.yaml"],
        },
    )
    run_dir, summary = run_on_local_model(root, monkeypatch, "tags")
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2
    for result in results:
        scores: dict[str, Any] = {s["name"]: s for s in result["scores"]}
        assert list(scores) == [*METRIC_KEYS, "labels_outside_vocabulary", "tags_detail"]
        for score in scores.values():
            assert score["value"] is not None or score["reason"], (result["item_id"], score)
    tags = summary["tags"]
    assert tags["items"] == 2 and tags["coverage"]["samples_with_gold_labels"] == 2
    for key in METRIC_KEYS:
        metric = tags["metrics"][key]
        assert metric["value"] is not None or metric["reason"], (key, metric)
        assert {"value", "reason", "coverage", "samples_measured", "samples_skipped"} <= set(metric)
    assert {g["name"] for g in summary["gates"]} == {
        "tags_topic_f1", "tags_risk_f1", "tags_risk_weighted_f1", "tags_action_accuracy"
    }  # fmt: skip


def test_a_fact_recall_run_through_the_real_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    write_project(
        root,
        "fact_recall",
        {
            "prompts": ["call-summary.yaml"],
            "evaluators": ["fact_recall_v1.yaml", "word_overlap_v1.yaml"],
            "datasets": ["support_calls_v1.jsonl", "support_calls_v1.yaml"],
        },
    )
    run_dir, summary = run_on_local_model(root, monkeypatch, "fact_recall")
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2
    for result in results:
        scores: dict[str, Any] = {s["name"]: s for s in result["scores"]}
        assert list(scores) == ["fact_recall", "fact_recall_facts", "word_recall"]
        for score in scores.values():
            assert score["value"] is not None or score["reason"], (result["item_id"], score)
        if scores["fact_recall"]["value"] is not None:
            assert 0 <= scores["fact_recall"]["value"] <= 100
            assert "expected facts kept" in scores["fact_recall"]["comment"]
    for key in ("fact_recall", "word_recall"):
        stats = summary["scores"][key]
        assert stats["n_total"] == 2 and (stats["n_measured"] or stats["null_reasons"])
