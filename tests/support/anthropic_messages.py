"""A Messages API server on 127.0.0.1 that checks requests the way Anthropic's API does, for the Anthropic provider.

It answers `POST /v1/messages` and rejects, with the API's status and error shape (`{"type": "error", "error":
{"type": "invalid_request_error", "message": ...}}`), what the real API rejects:

- no key (`x-api-key` or `Authorization: Bearer`): 401 `authentication_error`;
- an `anthropic-version` header other than `2023-06-01` or `2026-10-21` (the one anthropic SDK 2.x sends);
- a field the API does not know: `<field>: Extra inputs are not permitted`. Under `2026-10-21` that includes
  `temperature`, `top_p` and `top_k`, at any value; under `2023-06-01` they must be numbers in their ranges;
- `model` not a non-empty string, `max_tokens` not an integer of at least 1, `messages` empty or with a role
  other than user/assistant, a first message that is not the user's, empty text; `system` not a string or a
  list of text blocks; a tool without a valid name or an object `input_schema`; a `tool_choice` naming no tool.

A valid request is answered like the API: a `tool_use` block when `tool_choice` forces a tool (its input from
`tool_input(schema)`), else a text block (cut to `max_tokens` words, with `stop_reason: max_tokens`), with usage.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.loopback_http import LoopbackHTTPServer

VERSIONS = ("2023-06-01", "2026-10-21")
SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": None}
"""Sampling fields of the older API version, with their highest value (top_k has none)."""
FIELDS = {
    "model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream", "tools", "tool_choice",
    "thinking", "output_config", "service_tier", "container", "cache_control", "inference_geo",
}  # fmt: skip
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


class InvalidRequest(Exception):
    """What the API would answer with HTTP 400."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_content(where: str, content: Any) -> None:
    if isinstance(content, str):
        if not content:
            raise InvalidRequest(f"{where}: text content blocks must be non-empty")
        return
    if not isinstance(content, list) or not content:
        raise InvalidRequest(f"{where}: Input should be a valid string or a non-empty list of content blocks")
    for k, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise InvalidRequest(f"{where}.{k}: each content block needs a `type`")
        if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
            raise InvalidRequest(f"{where}.{k}.text: text content blocks must be non-empty")


def validate(body: Any, version: str) -> None:
    """Raise InvalidRequest with the API's message when the real Messages API would reject `body`."""
    if not isinstance(body, dict):
        raise InvalidRequest("body: Input should be a valid dictionary")
    allowed = FIELDS | (set(SAMPLING) if version == "2023-06-01" else set())
    for name in body:
        if name not in allowed:
            raise InvalidRequest(f"{name}: Extra inputs are not permitted")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise InvalidRequest("model: Field required (a non-empty string)")
    if not _is_int(body.get("max_tokens")) or body["max_tokens"] < 1:
        raise InvalidRequest("max_tokens: Input should be an integer greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: at least one message is required")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        for extra in sorted(set(message) - {"role", "content"}):
            raise InvalidRequest(f"messages.{i}.{extra}: Extra inputs are not permitted")
        _check_content(f"messages.{i}.content", message.get("content"))
    if messages[0]["role"] != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    if "system" in body:
        system = body["system"]
        if not isinstance(system, str) and not (
            isinstance(system, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in system)
        ):
            raise InvalidRequest("system: Input should be a valid string or a list of text blocks")
    for name, highest in SAMPLING.items():
        if name in body and (not _is_number(body[name]) or body[name] < 0 or (highest and body[name] > highest)):
            raise InvalidRequest(f"{name}: Input should be a number between 0 and {highest}")
    if body.get("stream"):
        raise InvalidRequest("stream: this server does not stream")
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise InvalidRequest("tools: Input should be a valid list")
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not TOOL_NAME.match(str(tool.get("name", ""))):
            raise InvalidRequest(f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise InvalidRequest(f"tools.{i}.input_schema.type: Input should be 'object'")
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
            raise InvalidRequest("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
        if choice["type"] == "tool" and choice.get("name") not in {t["name"] for t in tools}:
            raise InvalidRequest(f"tool_choice.name: no tool named {choice.get('name')!r} in `tools`")


class AnthropicMessages:
    """The server in a background thread; `requests` holds (headers, body) of every request received."""

    def __init__(self, tool_input: Callable[[dict[str, Any]], Any], text: str = "OK, understood.") -> None:
        self.tool_input = tool_input
        self.text = text
        self.requests: list[tuple[dict[str, str], Any]] = []
        self.rejected: list[str] = []
        self._lock = threading.Lock()
        self._httpd = LoopbackHTTPServer(("127.0.0.1", 0), _handler_for(self))
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        """The base URL a client is given (the SDK adds `/v1/messages`)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def close(self) -> None:
        """Stop the server."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, headers: dict[str, str], body: Any) -> tuple[int, dict[str, Any]]:
        """The status and JSON the API would answer."""
        with self._lock:
            self.requests.append((headers, body))
            number = len(self.requests)
        if not headers.get("x-api-key") and not headers.get("authorization", "").startswith("Bearer "):
            return 401, _error("authentication_error", "x-api-key header is required")
        version = headers.get("anthropic-version", "")
        try:
            if version not in VERSIONS:
                raise InvalidRequest(f"anthropic-version: {version!r} is not a valid version")
            validate(body, version)
        except InvalidRequest as exc:
            with self._lock:
                self.rejected.append(str(exc))
            return 400, _error("invalid_request_error", str(exc))
        choice = body.get("tool_choice") or {}
        words = sum(len(str(m["content"]).split()) for m in body["messages"]) + len(str(body.get("system", "")).split())
        if choice.get("type") == "tool":
            tool = next(t for t in body["tools"] if t["name"] == choice["name"])
            content = [{"type": "tool_use", "id": f"toolu_{number:06d}", "name": tool["name"],
                        "input": self.tool_input(tool["input_schema"])}]  # fmt: skip
            stop, out = "tool_use", 30
        else:
            text_words = self.text.split()
            kept = text_words[: body["max_tokens"]]
            content = [{"type": "text", "text": " ".join(kept)}]
            stop, out = ("max_tokens" if len(kept) < len(text_words) else "end_turn"), len(kept)
        return 200, {
            "id": f"msg_{number:06d}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": words, "output_tokens": out, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0},
        }  # fmt: skip


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_test"}


def _handler_for(server: AnthropicMessages) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if self.path.split("?")[0] != "/v1/messages":
                status, payload = 404, _error("not_found_error", f"no route POST {self.path}")
            else:
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    status, payload = 400, _error("invalid_request_error", "body: not valid JSON")
                else:
                    status, payload = server.answer(headers, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_test")
            self.end_headers()
            self.wfile.write(data)

    return Handler
