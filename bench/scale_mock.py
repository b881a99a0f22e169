"""The scale bench's own mock OpenAI endpoint (nginx + echo, 0 ms) and its standalone Langfuse test double.

The reply is the kit's `mock_response.json` with a tail that varies per request (nginx's `$request_id`): every
item gets its own output and word count, so two runs of the same items differ item by item and `compare`,
`diff` and the bootstrap see real per-item differences, not one constant.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from mock_endpoint import ECHO_MODULE, NGINX

REPO = Path(__file__).resolve().parents[1]
TAILS = {"~^[0-3]": "", "~^[4-7]": " Alpha.", "~^[89ab]": " Alpha beta.", "default": " Alpha beta gamma."}
"""The extra words an answer gets, by the first hex digit of nginx's random request id."""


def _nginx_quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "${dollar}") + "'"


class ScaleMock:
    """nginx + echo on one port, answering every chat completion at once with the kit's reply plus a varied tail."""

    def __init__(self, kit: Path, prefix: Path, port: int) -> None:
        self.kit, self.prefix, self.port = kit, prefix, port

    def config(self) -> str:
        """Return the nginx config."""
        body = json.loads((self.kit / "mock_response.json").read_text(encoding="utf-8"))
        content = body["choices"][0]["message"]["content"]
        marker = "@@TAIL@@"
        body["choices"][0]["message"]["content"] = f"{content} Ref $request_id.{marker}"
        text = _nginx_quoted(json.dumps(body)).replace("${dollar}request_id", "$request_id")
        text = text.replace(marker, "$scale_tail")
        tails = "\n".join(f"    {k} {_nginx_quoted(v)};" for k, v in TAILS.items())
        tmp = self.prefix / "tmp"
        return f"""load_module {ECHO_MODULE};
worker_processes 1;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/logs/error.log warn;
events {{ worker_connections 4096; multi_accept on; }}
http {{
  access_log off;
  default_type application/json;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  client_body_buffer_size 256k;
  client_max_body_size 8m;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  geo $dollar {{ default "$"; }}
  map $request_id $scale_tail {{
{tails}
  }}
  server {{
    listen 127.0.0.1:{self.port} reuseport backlog=4096;
    location = /v1/chat/completions {{
      if ($request_method != POST) {{ return 405; }}
      echo_read_request_body;
      echo {text};
    }}
    location = /v1/models {{ echo '{{"object": "list", "data": [{{"id": "mock", "object": "model"}}]}}'; }}
    location / {{ return 404; }}
  }}
}}
"""

    def __enter__(self) -> ScaleMock:
        for sub in ("logs", "tmp"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(self.config(), encoding="utf-8")
        started = subprocess.run([str(NGINX), "-p", str(self.prefix), "-c", str(conf)], capture_output=True)
        if started.returncode != 0:
            raise RuntimeError(f"the scale mock (nginx, port {self.port}) did not start: {started.stderr.decode()}")
        deadline = time.monotonic() + 10
        while True:
            try:
                contents = {self.reply() for _ in range(4)}
                if len(contents) < 2:
                    raise RuntimeError(f"the scale mock answers the same text every time: {contents}")
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self._stop()
                    raise
                time.sleep(0.2)

    def reply(self) -> str:
        """One chat completion's content from the mock."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/chat/completions", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    def _stop(self) -> None:
        pid_file = self.prefix / "nginx.pid"
        if pid_file.is_file():
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
            deadline = time.monotonic() + 5
            while pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()


class FakeLangfuseProcess:
    """Context manager: `bench/fake_langfuse_serve.py` in a child process; `env` points scoregate at it."""

    def __init__(self, python: Path, log: Path) -> None:
        self.python, self.log = python, log
        self.env: dict[str, str] = {}
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeLangfuseProcess:
        script = REPO / "bench" / "fake_langfuse_serve.py"
        self._proc = subprocess.Popen(
            [str(self.python), str(script)], stdout=subprocess.PIPE, stderr=self.log.open("w"), text=True
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.startswith("FAKE_LANGFUSE "):
            self._proc.kill()
            raise RuntimeError(f"the Langfuse test double did not start; see {self.log}")
        self.env = json.loads(line.removeprefix("FAKE_LANGFUSE "))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


if __name__ == "__main__":  # a quick look at the mock's replies: python bench/scale_mock.py PORT
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18700
    kit = Path(os.environ.get("BENCH_KIT", str(REPO / ".." / "shared" / "bench"))).resolve()
    with ScaleMock(kit, Path("/tmp/scale-mock-check"), port) as mock:
        for _ in range(3):
            print(mock.reply()[-80:])
