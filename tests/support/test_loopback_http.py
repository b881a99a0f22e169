"""The HTTP doubles answer a keep-alive client at once: a reply's headers and body go out in two writes, and without
TCP_NODELAY the second waits for the client's delayed ACK (about 40 ms on Linux) on every request."""

from __future__ import annotations

import time

import httpx

from support.scripted_openai import ScriptedOpenAI

REQUESTS = 20
STALLED_S = REQUESTS * 0.04
"""What the requests take when each reply waits for a delayed ACK; unstalled they take a few milliseconds."""


def test_the_scripted_openai_server_answers_a_keep_alive_client_without_a_delayed_ack_stall() -> None:
    server = ScriptedOpenAI()
    body = {"model": "scripted-1", "messages": [{"role": "user", "content": "hello"}]}
    try:
        with httpx.Client(timeout=10) as client:
            assert client.post(f"{server.url}/chat/completions", json=body).status_code == 200  # the connection
            started = time.perf_counter()
            for _ in range(REQUESTS):
                assert client.post(f"{server.url}/chat/completions", json=body).status_code == 200
            elapsed = time.perf_counter() - started
    finally:
        server.close()
    assert elapsed < STALLED_S / 2, f"{REQUESTS} requests took {elapsed:.3f} s"
