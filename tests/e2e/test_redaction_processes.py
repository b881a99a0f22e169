"""Secrets stay secret, through the real executable: no piece of a key an endpoint echoes back reaches any file
of the run or any output."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from scoregate.support.redaction import MASK
from support.long_key import LONG_KEY
from support.loopback_http import LoopbackHTTPServer
from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import (
    JUDGE_SYSTEM_MARK,
    PREFLIGHT_MARK,
    json_for_schema,
    markdown_summary,
    request_schema,
)

Edit = Callable[[Path, Callable[[Any], None]], None]
LF_PUBLIC, LF_SECRET = "pk-lf-public-1234", "sk-lf-secret-98765"
FRAGMENT = 20


class EchoGateway:
    """An OpenAI-compatible gateway on 127.0.0.1 that echoes each request's Authorization header back.

    Task calls alternate: an HTTP 400 whose message puts the header past character 200 (so a 300-character cut
    lands inside the key), and a summary with the header in it. Judge calls cycle: the same 400, a JSON verdict
    whose reasoning holds the header, and a reply that is not JSON and starts with it (cut at 80 characters).
    """

    def __init__(self) -> None:
        self.calls = {"task": 0, "judge": 0}
        self.lock = threading.Lock()
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                status, payload = gateway.answer(body, str(self.headers.get("Authorization")))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict[str, Any], header: str) -> tuple[int, dict[str, Any]]:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        kind = "judge" if JUDGE_SYSTEM_MARK in text else "task"
        with self.lock:
            n = self.calls[kind] = self.calls[kind] + 1
        echo = f"Authorization: {header}"
        refused = {"error": {"message": "the upstream refused this request. " * 6 + echo, "type": "gateway"}}
        if PREFLIGHT_MARK in text:
            reply = f"OK {echo}"
        elif kind == "task":
            if n % 2:
                return 400, refused
            reply = markdown_summary(body).replace("## Key Topics", f"{echo}\n\n## Key Topics")
        elif n % 3 == 0:
            return 400, refused
        elif n % 3 == 1:
            verdict = json_for_schema(request_schema(body) or {"type": "object"})
            reply = json.dumps({**verdict, "reasoning": f"The request carried {echo}; the summary is fine."})
        else:
            reply = f"{echo} and more words that are not JSON"
        choice = {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
        return 200, {"id": "x", "object": "chat.completion", "choices": [choice], "usage": {}}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def leaks(data: bytes) -> list[str]:
    """The FRAGMENT-character pieces of LONG_KEY found in `data`."""
    pieces = {LONG_KEY[i : i + FRAGMENT] for i in range(len(LONG_KEY) - FRAGMENT + 1)}
    return sorted(p for p in pieces if p.encode() in data)


@pytest.mark.usefixtures("mlflow_store")
def test_no_piece_of_an_echoed_key_reaches_any_file_or_output(
    project_dir: Path, edit_yaml: Edit, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(LONG_KEY) == 164 and len(set(leaks(LONG_KEY.encode()))) == 145
    gateway = EchoGateway()
    monkeypatch.setenv("GATEWAY_KEY", LONG_KEY)  # named only by the model's api_key_env

    def to_gateway(config: dict[str, Any]) -> None:
        config["models"]["scripted"].update(api_key_env="GATEWAY_KEY", base_url=gateway.url, max_retries=0)

    edit_yaml(project_dir / "scoregate.yaml", to_gateway)
    printed: list[str] = []

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(SCOREGATE_BIN), *args, "-C", str(project_dir)],
            capture_output=True, text=True, timeout=300, cwd=project_dir.parent,
        )  # fmt: skip
        printed.append(done.stdout + done.stderr)
        return done

    try:
        run = cli("run", "smoke")
        run_id = Runs(project_dir).latest()
        cli("runs", "show", run_id, "--items")
        cli("runs", "show", run_id, "--failed")
        cli("runs", "show", run_id, "--json")
        sync = cli("mlflow-sync", run_id, "--eval-rows")
        cli("report", run_id)
    finally:
        gateway.close()

    assert run.returncode in (0, 3), run.stderr  # the run finished (its gates may fail)
    assert sync.returncode == 0, sync.stderr
    results = Runs(project_dir).results(run_id)
    errors = " ".join(str(r["error"]) for r in results)
    reasons = " ".join(str(s["reason"]) + str(s["comment"]) for r in results for s in r["scores"])
    assert "HTTP 400" in errors and "not JSON" in reasons and "The request carried" in reasons  # every case ran
    assert MASK in errors and MASK in reasons and MASK in json.dumps([r["output"] for r in results])
    files = [p for p in project_dir.parent.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"results.jsonl", "summary.json", "metrics.json", "metrics.csv", "report.html", "cache.sqlite"} <= names
    assert any("mlartifacts" in p.parts for p in files) and any(p.name == "mlflow.db" for p in files)
    assert {str(p.relative_to(project_dir.parent)): leaks(p.read_bytes()) for p in files if leaks(p.read_bytes())} == {}
    assert [leaks(out.encode()) for out in printed] == [[]] * len(printed)
