"""The kit's mock OpenAI endpoint (nginx + echo module): check its packages, reuse or start it, stop what we start."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

NGINX = Path("/usr/sbin/nginx")
ECHO_MODULE = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")
INSTALL_HINT = "apt-get update && apt-get install -y nginx-light libnginx-mod-http-echo"
PORTS = {18000: 0.0, 18200: 0.2}
"""Port → latency the kit's mock adds before answering (seconds)."""


def missing_packages() -> list[str]:
    """Return the Debian packages the mock needs that are not installed (empty when all are there)."""
    missing = []
    if not NGINX.is_file():
        missing.append("nginx-light")
    if not ECHO_MODULE.is_file():
        missing.append("libnginx-mod-http-echo")
    return missing


def probe(port: int, timeout_s: float = 5.0) -> float | None:
    """Return the seconds one chat completion took on `port`, or None when nothing valid answers there."""
    body = json.dumps({"model": "mock", "messages": [{"role": "user", "content": "ping"}]}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            payload = json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None
    elapsed = time.perf_counter() - started
    choices = payload.get("choices") if isinstance(payload, dict) else None
    return elapsed if choices else None


def _answers_as_expected(port: int, latency_s: float) -> bool:
    elapsed = probe(port)
    return elapsed is not None and elapsed >= latency_s * 0.9


class MockEndpoint:
    """Context manager: use the mock already listening on both ports, else start the kit's and stop it after."""

    def __init__(self, kit: Path, prefix: Path) -> None:
        self.kit = kit
        self.prefix = prefix
        self.started = False

    def _script(self, command: str) -> None:
        env = {**os.environ, "MOCK_PREFIX": str(self.prefix)}
        subprocess.run(["bash", str(self.kit / "mock_server.sh"), command], env=env, check=True, capture_output=True)

    def __enter__(self) -> MockEndpoint:
        if all(_answers_as_expected(port, latency) for port, latency in PORTS.items()):
            return self
        self._script("start")
        self.started = True
        deadline = time.monotonic() + 10
        while not all(_answers_as_expected(port, latency) for port, latency in PORTS.items()):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the mock did not answer on ports {sorted(PORTS)}; see {self.prefix}/logs/error.log"
                )
            time.sleep(0.2)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.started:
            self._script("stop")

    @property
    def note(self) -> str:
        """Say whether this bench started the mock or found one running."""
        return f"started by the bench (MOCK_PREFIX={self.prefix})" if self.started else "already running; reused"
