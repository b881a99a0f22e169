"""The README's two commands work on a fresh clone: `make experiment` and `make test` each set up `.venv` first;
`make mlflow-ui` says that the UI takes a while to start and prints its address once it answers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "target", ["experiment", "test", "test-all", "test-fast", "test-langfuse-old", "test-langfuse-sdk4", "lint"]
)
def test_a_target_on_a_fresh_clone_creates_the_virtual_environment_first(tmp_path: Path, target: str) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, clone / name)
    # Under `make test-all` this test runs inside make: MAKELEVEL makes the inner make print
    # "Entering directory '/tmp/pytest-of-...'", a line that is not a command.
    outer_make = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
    env = {key: value for key, value in os.environ.items() if key not in outer_make}
    planned = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout
    commands = [line for line in planned.splitlines() if not line.startswith("make[")]
    venv = next(i for i, line in enumerate(commands) if "-m venv .venv" in line)
    model = next(i for i, line in enumerate(commands) if "tools/build_llama_wheel.py" in line)
    first_own = next(
        i for i, line in enumerate(commands) if "pytest" in line or "scoregate validate" in line or "ruff" in line
    )
    assert venv < model < first_own, planned


FAKE_MLFLOW = """
import http.server, sys, time
from pathlib import Path

Path(sys.argv[0]).with_name("argv.txt").write_text(" ".join(sys.argv[1:]))
port = int(sys.argv[sys.argv.index("--port") + 1])
print("fake mlflow: starting", flush=True)
time.sleep(1.5)  # what MLflow does before it answers: start its workers (and migrate a new store)
print("fake mlflow: listening", flush=True)
server = http.server.HTTPServer(("127.0.0.1", port), http.server.SimpleHTTPRequestHandler)
server.timeout = 0.2
until = time.monotonic() + 3
while time.monotonic() < until:
    server.handle_request()
"""


def test_mlflow_ui_says_it_takes_a_while_then_prints_its_address_once_it_answers(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "tools").mkdir(parents=True)
    shutil.copy(REPO / "Makefile", clone / "Makefile")
    for tool in (REPO / "tools").glob("*.py"):
        shutil.copy(tool, clone / "tools" / tool.name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")  # the venv's
    (bin_dir / "python").chmod(0o755)
    (bin_dir / "mlflow").write_text(f"#!{sys.executable}\n{FAKE_MLFLOW}", encoding="utf-8")
    (bin_dir / "mlflow").chmod(0o755)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outer_make = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
    env = {key: value for key, value in os.environ.items() if key not in outer_make} | {"MLFLOW_PORT": str(port)}

    ran = subprocess.run(
        ["make", "--no-print-directory", "mlflow-ui", f"BIN={bin_dir}"],
        cwd=clone, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip

    lines = ran.stdout.splitlines()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    url = f"http://127.0.0.1:{port}"
    assert (bin_dir / "argv.txt").read_text() == (
        f"ui --backend-store-uri sqlite:///{clone}/mlflow.db --host 127.0.0.1 --port {port}"
    )
    wait_notice = next(i for i, line in enumerate(lines) if "minute or more" in line)
    started = lines.index("fake mlflow: starting")
    listening = lines.index("fake mlflow: listening")
    ready = next(i for i, line in enumerate(lines) if "ready" in line and url in line)
    assert wait_notice < started < listening < ready, ran.stdout  # said before it starts; the address once it answers
    assert all(len(line) <= 80 for line in lines if not line.startswith("fake mlflow")), ran.stdout
