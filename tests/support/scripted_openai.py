"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests that need a real HTTP endpoint.

It answers `POST /v1/chat/completions` (with `usage`) and `GET /v1/models`, records every request, and can be
scripted: a default responder (request body → reply text), a queue of faults per path (`fail_next`,
`delay_next`), a per-request latency, and `down()` to stop accepting connections.

The default responder answers a request carrying a JSON schema (`response_format` json_schema, json_object
with `schema`, or `guided_json`) with JSON valid for that schema — integer enum fields take `judge_score`
(default: the highest allowed value), other integers `count`, strings a short text — and any other request
with a markdown summary in the sections the shipped prompts ask for (the how-to sections when the prompt asks
for `Step-by-step`).
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from scoregate.providers.scripted import json_for_schema as generated_json
from support.loopback_http import LoopbackHTTPServer

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
JUDGE_SYSTEM_MARK = "strict, careful evaluator"
PREFLIGHT_MARK = "scoregate preflight"
PREFLIGHT = "preflight"
"""Fault queue of the one-token check a run sends before it starts: `fail_next(401, path=PREFLIGHT)`."""
SHORT_TEXT = "The summary is grounded and specific."

Responder = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    at: float

    @property
    def text(self) -> str:
        """Every message's content joined, to search what the client asked."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))

    @property
    def is_preflight(self) -> bool:
        """True for the one-token request a run sends to check the endpoint before it starts."""
        return self.path == CHAT_PATH and PREFLIGHT_MARK in self.text

    @property
    def is_judge(self) -> bool:
        """True for an LLM-judge request (the judge's system message)."""
        return JUDGE_SYSTEM_MARK in self.text


@dataclass
class _Fault:
    status: int | None = None
    delay_s: float = 0.0
    retry_after: float | None = None
    body: str | None = None
    times: int = 1


def request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the JSON schema a chat request asks the reply to follow, if any."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return dict(fmt.get("json_schema", {}).get("schema") or {"type": "object"})
    if fmt.get("type") == "json_object":
        return dict(fmt.get("schema") or {"type": "object"})
    guided = body.get("guided_json")
    return dict(guided) if isinstance(guided, dict) else None


def json_for_schema(schema: dict[str, Any], *, score: int | float | None = None, count: int = 0) -> Any:
    """Return a value obeying `schema`; integer enums take `score` (None: the highest), other integers `count`.

    The scripted provider's generator (`provider: scripted` answers a schema request the same way), strings as
    `SHORT_TEXT`.
    """
    return generated_json(schema, score=score, count=count, text=SHORT_TEXT)


_TITLE = re.compile(r"Episode title:\s*(.+)")


def markdown_summary(body: dict[str, Any]) -> str:
    """Return a realistic markdown summary of the episode a task request names (how-to style when asked)."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    found = _TITLE.search(text)
    title = found.group(1).strip() if found else "this episode"
    tldr = f"## TL;DR\nThe hosts cover {title} and explain why it matters for working engineers.\n\n"
    refs = (
        "## References & Tools\n- PostgreSQL: the database discussed\n- Ruff: a Python linter\n"
        "- Announcement: https://example.com/episode-notes\n"
    )
    if "Step-by-step" in text:
        return (
            tldr + "## Step-by-step\n1. Install the tool with `pip install ruff`.\n"
            "2. Add the hook to `.pre-commit-config.yaml`.\n3. Run `pre-commit run --all-files`.\n\n"
            "## Pitfalls/Notes\n- Pin the tool version so results do not drift.\n\n" + refs
        )
    return (
        tldr + "## Key Topics\n- What changed and who it affects\n- How the community reacted\n"
        "- What to watch next\n\n## Where to Read More\n- https://example.com/episode-notes\n\n" + refs
    )


class ScriptedOpenAI:
    """An OpenAI-compatible server in a background thread; see the module docstring."""

    def __init__(self, *, judge_score: int | float | None = None, count: int = 0, model: str = "scripted-1") -> None:
        self.judge_score = judge_score
        self.count = count
        self.model = model
        self.latency_s = 0.0
        self.send_usage = True
        """False: replies carry no `usage` (like providers that report none)."""
        self.responder: Responder = self.default_reply
        self.requests: list[RecordedRequest] = []
        self._faults: dict[str, list[_Fault]] = {}
        self._lock = threading.Lock()
        self._httpd = LoopbackHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._up = True
        self._connections: set[Any] = set()

    @property
    def url(self) -> str:
        """The OpenAI base URL (`http://127.0.0.1:PORT/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def default_reply(self, body: dict[str, Any]) -> str:
        """JSON for a schema request, else a markdown summary."""
        schema = request_schema(body)
        if schema is not None:
            return json.dumps(json_for_schema(schema, score=self.judge_score, count=self.count))
        return markdown_summary(body)

    def fail_next(
        self,
        status: int,
        times: int = 1,
        retry_after: float | None = None,
        body: str | None = None,
        path: str = CHAT_PATH,
    ) -> None:
        """Answer the next `times` requests on `path` with HTTP `status` (and a Retry-After header)."""
        self._queue(path, _Fault(status=status, retry_after=retry_after, body=body, times=times))

    def delay_next(self, seconds: float, times: int = 1, path: str = CHAT_PATH) -> None:
        """Hold the next `times` requests on `path` for `seconds` before answering normally."""
        self._queue(path, _Fault(delay_s=seconds, times=times))

    def down(self) -> None:
        """Stop listening: every later connection is refused, and kept-alive connections are dropped."""
        if self._up:
            self._up = False
            self._httpd.shutdown()
            self._httpd.server_close()
            with self._lock:
                open_connections = list(self._connections)
            for connection in open_connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def up(self) -> None:
        """Listen again on the same port after `down()`: an endpoint that comes back."""
        if not self._up:
            self._httpd = LoopbackHTTPServer(("127.0.0.1", self.port), _handler_for(self))
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
            self._up = True

    def close(self) -> None:
        """Stop the server."""
        self.down()

    def clear_faults(self) -> None:
        """Forget every fault and delay still queued, on every path."""
        with self._lock:
            self._faults.clear()

    def clear_requests(self) -> None:
        """Forget the requests recorded so far."""
        with self._lock:
            self.requests.clear()

    def chat_requests(self) -> list[RecordedRequest]:
        """Every chat-completion request received for items (not the preflight check), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.path == CHAT_PATH and not r.is_preflight]

    def preflight_requests(self) -> list[RecordedRequest]:
        """The one-token checks runs sent before starting."""
        with self._lock:
            return [r for r in self.requests if r.is_preflight]

    def task_requests(self) -> list[RecordedRequest]:
        """Chat requests that were not judge requests (the prompt under test)."""
        return [r for r in self.chat_requests() if not r.is_judge]

    def judge_requests(self) -> list[RecordedRequest]:
        """Chat requests from LLM judges."""
        return [r for r in self.chat_requests() if r.is_judge]

    def _queue(self, path: str, fault: _Fault) -> None:
        with self._lock:
            self._faults.setdefault(path, []).append(fault)

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            queue = self._faults.get(path) or []
            if not queue:
                return None
            fault = queue[0]
            fault.times -= 1
            if fault.times <= 0:
                queue.pop(0)
            return fault

    def _record(self, method: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body, headers, time.monotonic()))

    def _completion(self, body: dict[str, Any], text: str | None = None) -> dict[str, Any]:
        text = self.responder(body) if text is None else text
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        out_words = len(text.split())
        reply = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": out_words,
                      "total_tokens": prompt_words + out_words},
        }  # fmt: skip
        if not self.send_usage:
            del reply["usage"]
        return reply


def _handler_for(server: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout under test)

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_unparsable": raw.decode(errors="replace")}
            server._record(method, self.path, body, {k.lower(): v for k, v in self.headers.items()})
            preflight = server.requests[-1].is_preflight  # its faults queue apart, so item faults hit items
            fault = server._take_fault(PREFLIGHT if preflight else self.path)
            delay = server.latency_s + (fault.delay_s if fault else 0.0)
            if delay:
                time.sleep(delay)
            if fault is not None and fault.status is not None:
                headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                error = fault.body or json.dumps(
                    {"error": {"message": f"scripted HTTP {fault.status}", "type": "scripted", "code": None}}
                )
                self._send(fault.status, error.encode(), headers)
                return
            if method == "GET" and self.path == MODELS_PATH:
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            elif method == "POST" and self.path == CHAT_PATH and preflight:  # answered apart from the responder
                self._send(200, server._completion(body, text="OK"))
            elif method == "POST" and self.path == CHAT_PATH:
                self._send(200, server._completion(body))
            else:
                self._send(404, {"error": {"message": f"no route {method} {self.path}"}})

        def do_GET(self) -> None:
            """Answer GET requests."""
            self._serve("GET")

        def do_POST(self) -> None:
            """Answer POST requests."""
            self._serve("POST")

    return Handler
