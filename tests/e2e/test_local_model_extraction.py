"""The extraction track through the real embedded local model: `scoregate run extraction --limit 2`."""

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

from scoregate.tracks.extraction.metrics import METRIC_KEYS
from support.local_model import MISSING, stop_server

REPO = Path(__file__).resolve().parents[2]
SCOREGATE = Path(sys.executable).parent / "scoregate"
FIRST = ("tic-001", "rev-001")
"""Two short documents with small schemas go first, so `--limit 2` stays quick on CPU."""

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


def write_project(root: Path) -> None:
    """The shipped extraction dataset (two short items first), prompt and evaluator, on the local model."""
    for folder, name in (("prompts", "extraction.yaml"), ("evaluators", "extraction_v1.yaml")):
        (root / folder).mkdir(parents=True)
        shutil.copy(REPO / folder / name, root / folder / name)
    (root / "datasets").mkdir()
    shutil.copy(REPO / "datasets" / "extraction_v1.yaml", root / "datasets" / "extraction_v1.yaml")
    lines = (REPO / "datasets" / "extraction_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = [line for line in lines if json.loads(line)["id"] in FIRST]
    rest = [line for line in lines if json.loads(line)["id"] not in FIRST]
    (root / "datasets" / "extraction_v1.jsonl").write_text("".join(first + rest), encoding="utf-8")
    shipped = yaml.safe_load((REPO / "scoregate.yaml").read_text(encoding="utf-8"))
    config = {
        "project": "local-extraction-test",
        "settings": {"model": "local", "concurrency": 1, "bootstrap_resamples": 100},
        "models": {"local": {"provider": "local", "model": "smollm2-135m", "timeout_s": 120, "max_retries": 1}},
        "gates": [g for g in shipped["gates"] if g["name"].startswith("extraction_")],
        "experiments": {"extraction": shipped["experiments"]["extraction"]},
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def scoregate(root: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCOREGATE), *args, "-C", str(root)], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_two_items_through_the_real_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    write_project(root)
    port = free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("SCOREGATE_DEBUG", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST"):
        monkeypatch.delenv(name, raising=False)

    served = scoregate(root, "model", "serve", timeout=150)
    try:
        assert served.returncode == 0, served.stderr
        ran = scoregate(root, "run", "extraction", "--limit", "2", "--no-mlflow", "--no-langfuse", timeout=400)

        assert "Traceback" not in ran.stderr, ran.stderr
        (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "finished"
        results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        assert sorted(r["item_id"] for r in results) == sorted(FIRST)
        for result in results:
            (task,) = [c for c in result["calls"] if c["purpose"] == "task"]
            assert task["endpoint"] == f"http://127.0.0.1:{port}/v1" and task["error"] is None
            scores: dict[str, Any] = {s["name"]: s for s in result["scores"]}
            assert list(scores) == list(METRIC_KEYS)
            for score in scores.values():
                assert score["value"] is not None or score["reason"], (result["item_id"], score)
            assert scores["parsed"]["value"] in (0.0, 1.0) and 0.0 <= scores["eqs"]["value"] <= 1.0
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["run_metrics"]["items"] == 2 and summary["verdict"] in ("pass", "fail", "incomplete")
        assert {g["name"] for g in summary["gates"]} == {
            "extraction_minimum_" + c
            for c in ("eqs", "schema_validity", "field_f1_partial", "hallucination_rate", "latency_p95", "success_rate")
        }
    finally:
        stop_server(root)
