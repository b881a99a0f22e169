"""Secrets stay secret: a key an endpoint echoes back in an error is redacted before it is stored, printed or
mirrored (results.jsonl, summary.json, MLflow, the terminal, `langfuse-sync`)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from scoregate.support.redaction import MASK, redact
from support.loopback_http import LoopbackHTTPServer
from support.projects import SCOREGATE_BIN, CliResult, Runs
from support.scripted_openai import (
    JUDGE_SYSTEM_MARK,
    PREFLIGHT_MARK,
    ScriptedOpenAI,
    json_for_schema,
    markdown_summary,
    request_schema,
)

Edit = Callable[[Path, Callable[[Any], None]], None]
MODEL_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c"
LF_PUBLIC, LF_SECRET = "pk-lf-public-1234", "sk-lf-secret-98765"


def files_holding(root: Path, needle: str) -> list[Path]:
    """Every file under `root` whose bytes contain `needle`."""
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.usefixtures("mlflow_store")
def test_a_key_echoed_by_the_endpoint_is_redacted_in_the_store_the_output_and_mlflow(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", MODEL_KEY)
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"]["scripted"].update(api_key_env="SCRIPTED_KEY"))
    echo = {"error": {"message": f"bad request; you sent Authorization: Bearer {MODEL_KEY}", "type": "gateway"}}
    scripted_server.fail_next(400, times=2, body=json.dumps(echo))  # a gateway that echoes the header

    result = scoregate("run", "counters")

    assert scripted_server.task_requests()[0].headers["authorization"] == f"Bearer {MODEL_KEY}"  # it was sent
    assert MODEL_KEY not in result.out + result.err
    assert MASK in (runs.root / runs.latest() / "results.jsonl").read_text(encoding="utf-8")
    assert files_holding(project_dir, MODEL_KEY) == []  # results.jsonl, summary.json, MLflow artifacts
    mlflow_db = project_dir.parent / "mlflow" / "mlflow.db"
    assert MODEL_KEY.encode() not in mlflow_db.read_bytes()
    assert runs.summary()["run_metrics"]["error_count"] == 2


@pytest.fixture
def echoing_langfuse() -> Iterator[str]:
    """A 'Langfuse' that refuses every request, echoing the request's Authorization header in its error body."""

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _refuse(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            body = json.dumps({"message": f"forbidden for Authorization: {self.headers.get('Authorization')}"})
            data = body.encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = _refuse

    server = LoopbackHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_langfuse_sync_never_prints_the_basic_header(
    scoregate: Callable[..., CliResult], runs: Runs, echoing_langfuse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scoregate("run", "counters", "--limit", "1", "--no-mlflow").code == 0
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", LF_PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", LF_SECRET)
    monkeypatch.setenv("LANGFUSE_HOST", echoing_langfuse)
    basic = base64.b64encode(f"{LF_PUBLIC}:{LF_SECRET}".encode()).decode()

    result = scoregate("langfuse-sync", runs.latest())

    assert result.code != 0
    assert "403" in result.output
    assert basic not in result.out + result.err
    assert LF_SECRET not in result.out + result.err


def test_redact_masks_each_known_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", LF_PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", LF_SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", MODEL_KEY)
    basic = base64.b64encode(f"{LF_PUBLIC}:{LF_SECRET}".encode()).decode()

    text = redact(f"Basic {basic} / {LF_SECRET} / Bearer {MODEL_KEY} / {LF_PUBLIC}")

    assert text == f"Basic {MASK} / {MASK} / Bearer {MASK} / {LF_PUBLIC}"


LONG_KEY = "sk-proj-" + "".join(hashlib.sha256(bytes([i])).hexdigest() for i in range(3))[:156]  # 164 characters
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


def test_redact_masks_any_piece_of_twenty_characters_of_a_key_in_any_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", LONG_KEY)
    in_basic = base64.b64encode(f"user:{LONG_KEY}".encode()).decode()  # the key at an offset inside base64

    assert redact(f"cut: {LONG_KEY[:150]}…") == f"cut: {MASK}…"
    assert redact(f"({LONG_KEY[77:97]})") == f"({MASK})"
    assert redact(f"Basic {in_basic[30:90]} end") == f"Basic {MASK} end"
    assert redact(f"short: {LONG_KEY[77:96]}") == f"short: {LONG_KEY[77:96]}"  # 19 characters: not a known piece
    assert redact("an ordinary sentence of the summary, nothing secret in it") == (
        "an ordinary sentence of the summary, nothing secret in it"
    )
