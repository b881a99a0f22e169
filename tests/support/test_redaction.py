"""Secrets stay secret: a key an endpoint echoes back in an error is redacted before it is stored, printed or
mirrored (results.jsonl, summary.json, MLflow, the terminal, `langfuse-sync`). The search for any piece of a
key in every file and output of a real run is in tests/e2e/test_redaction_processes.py."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from scoregate.support.redaction import MASK, redact
from support.long_key import LONG_KEY
from support.loopback_http import LoopbackHTTPServer
from support.projects import CliResult, Runs
from support.scripted_openai import (
    ScriptedOpenAI,
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
