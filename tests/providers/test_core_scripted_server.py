"""The scripted server answers like an OpenAI-compatible endpoint, so the other core tests can trust it."""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path

import httpx
import jsonschema
import pytest
import yaml

from scoregate.scoring.judge import judge_schema
from scoregate.scoring.kinds.llm_judge import LlmJudgeSpec
from support.fake_langfuse import FakeLangfuse
from support.scripted_openai import ScriptedOpenAI

EVALUATORS = Path(__file__).resolve().parents[2] / "evaluators"
JUDGES = ["ev_actionability_v1", "ev_conciseness_v1", "ev_faithfulness_v1"]


def chat(server: ScriptedOpenAI, **body: object) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json={"model": "scripted-1", **body}, timeout=5)


@pytest.mark.parametrize("name", JUDGES)
def test_json_replies_obey_each_shipped_judge_schema(scripted_server: ScriptedOpenAI, name: str) -> None:
    spec = LlmJudgeSpec.model_validate(yaml.safe_load((EVALUATORS / f"{name}.yaml").read_text(encoding="utf-8")))
    schema = judge_schema([spec.score, *spec.extra])
    response_format = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}

    reply = chat(scripted_server, messages=[{"role": "user", "content": "grade"}], response_format=response_format)

    assert reply.status_code == 200
    body = reply.json()
    answer = json.loads(body["choices"][0]["message"]["content"])
    jsonschema.validate(answer, schema)
    assert answer[spec.score.key] == 5
    assert body["usage"]["prompt_tokens"] > 0 and body["usage"]["completion_tokens"] > 0


def test_markdown_reply_has_the_sections_the_prompt_asks_for(scripted_server: ScriptedOpenAI) -> None:
    howto = chat(scripted_server, messages=[{"role": "user", "content": "Episode title: X\n## Step-by-step"}])
    catchup = chat(scripted_server, messages=[{"role": "user", "content": "Episode title: X\n## Key Topics"}])

    howto_text = howto.json()["choices"][0]["message"]["content"]
    catchup_text = catchup.json()["choices"][0]["message"]["content"]
    for heading in ("## TL;DR", "## Step-by-step", "## Pitfalls/Notes", "## References & Tools", "https://"):
        assert heading in howto_text
    for heading in ("## TL;DR", "## Key Topics", "## Where to Read More", "## References & Tools", "https://"):
        assert heading in catchup_text


def test_faults_are_served_in_order_then_normal_replies_resume(scripted_server: ScriptedOpenAI) -> None:
    scripted_server.fail_next(429, times=2, retry_after=3)
    messages = [{"role": "user", "content": "hi"}]

    first, second, third = (chat(scripted_server, messages=messages) for _ in range(3))

    assert (first.status_code, first.headers["retry-after"]) == (429, "3")
    assert second.status_code == 429
    assert third.status_code == 200
    assert len(scripted_server.chat_requests()) == 3
    assert httpx.get(f"{scripted_server.url}/models", timeout=5).json()["data"][0]["id"] == "scripted-1"
    scripted_server.down()
    with pytest.raises(httpx.ConnectError):
        chat(scripted_server, messages=messages)


def _reset_a_kept_alive_connection(port: int, path: str) -> None:
    """Send one request, read its answer, then drop the connection with a TCP reset, as a killed client does."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".encode())
        assert client.recv(65536).startswith(b"HTTP/1.1 ")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.mark.parametrize("double", ["scripted_openai", "fake_langfuse"])
def test_a_client_killed_mid_connection_prints_no_traceback(double: str, capsys: pytest.CaptureFixture[str]) -> None:
    if double == "scripted_openai":
        openai = ScriptedOpenAI()
        port, path, stop = openai.port, "/v1/models", openai.close
    else:
        langfuse = FakeLangfuse().start()
        port, path, stop = int(langfuse.base_url.rsplit(":", 1)[1]), "/api/public/health", langfuse.stop
    try:
        _reset_a_kept_alive_connection(port, path)
        time.sleep(0.3)  # the server's handler thread meets the reset while reading the next request line
        assert capsys.readouterr().err == ""
    finally:
        stop()
