"""An in-process fake Langfuse server (public API + OTLP) on 127.0.0.1, driven by the real SDK in tests."""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from support.loopback_http import LoopbackHTTPServer

from .endpoints import Call, InvalidBody, route
from .storage import ApiProblem, State, js_numbers
from .validation import ValidationFailure
from .widgets import root_trace, widget_rows

ServerMode = Literal["old", "new"]
GENERATION_ENV = "SCOREGATE_FAKE_LANGFUSE"
"""Which server generation a FakeLangfuse is when a test does not say: `old` or `new` (default). `make test`
runs the Langfuse tests once per generation."""
GENERATION_VERSIONS: dict[str, str] = {"old": "4.16.0", "new": "4.59.0"}
"""What GET /api/public/health answers per generation: the recorded server, and the first that takes score arrays."""
NOT_FOUND_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/><title>404: This page could not be found.'
    "</title></head><body><h1>404</h1><h2>This page could not be found.</h2></body></html>"
)
BAD_KEYS = "Invalid credentials. Confirm that you've configured the correct host."


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake answered: what came in (JSON body parsed, None otherwise) and what went out."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int
    response: Any


@dataclass
class _Fault:
    path_prefix: str
    status: int
    retry_after: int | None
    remaining: int


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server: _Server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        fake = self.server.fake
        if fake.is_refusing:  # a kept-alive connection outlived down(): drop it unanswered
            self.close_connection = True
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, extra_headers, payload = fake.handle(self.command, self.path, headers, raw)
        self.send_response(status)
        for name, value in extra_headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the fake's own request log is `FakeLangfuse.requests`."""


class _Server(LoopbackHTTPServer):
    fake: FakeLangfuse


class FakeLangfuse:
    """A fake Langfuse server on a free loopback port, serving what the SDK (4.x and 5.x) calls.

    `server_mode="old"` answers like Langfuse < v4.59 (the recorded v4.16): POST /api/public/scores takes one
    object and answers an array with 400 `expected object, received array`; trace metadata is stored as the
    span attributes carry it (SDK 5's JSON-encoded strings keep their quotes). `"new"` (v4.59+) also takes the
    array (202, or 207 with per-score errors) and decodes SDK 5's metadata values. Without `server_mode`, the
    generation comes from $SCOREGATE_FAKE_LANGFUSE (default `new`); `server_version` (what /api/public/health
    answers) follows the generation unless given. Every body is validated against the SDK's `langfuse.api`
    models; failures answer 400 and land in `validation_failures`. The default public key is unique per
    instance, because the SDK keeps one client per public key for the whole process.
    """

    def __init__(
        self,
        *,
        public_key: str | None = None,
        secret_key: str = "sk-lf-fake-secret",
        server_mode: ServerMode | None = None,
        port: int = 0,
        server_version: str | None = None,
        missing_apis: tuple[str, ...] = (),
    ) -> None:
        self.public_key = public_key or f"pk-lf-fake-{uuid.uuid4().hex[:8]}"
        self.secret_key = secret_key
        self.server_mode: ServerMode = server_mode or default_generation()
        self._version = server_version
        self.missing_apis = missing_apis
        """Path prefixes answered with the web 404 page, like a server version without those APIs."""
        self.state = State()
        self.requests: list[RecordedRequest] = []
        self.validation_failures: list[ValidationFailure] = []
        self._faults: list[_Fault] = []
        self._down_status: int | None = None
        self._lock = threading.RLock()
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def server_version(self) -> str:
        """What GET /api/public/health answers: the version given, else the generation's."""
        return self._version or GENERATION_VERSIONS[self.server_mode]

    @server_version.setter
    def server_version(self, version: str | None) -> None:
        self._version = version

    # ---- lifecycle ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The URL to give the SDK as `base_url` / LANGFUSE_HOST."""
        return f"http://127.0.0.1:{self._port}"

    @property
    def is_refusing(self) -> bool:
        """True while down() refuses connections."""
        return self._httpd is None and self._thread is not None

    def start(self) -> FakeLangfuse:
        """Bind the port (a free one the first time, the same one after down()) and serve in a thread."""
        self._httpd = _Server(("127.0.0.1", self._port), _Handler)
        self._httpd.fake = self
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-langfuse", daemon=True
        )
        self._thread.start()
        return self

    def _close_socket(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._close_socket()
        self._thread = None

    def __enter__(self) -> FakeLangfuse:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def env(self) -> dict[str, str]:
        """Environment variables that point an SDK client (or scoregate) at this fake."""
        return {
            "LANGFUSE_PUBLIC_KEY": self.public_key,
            "LANGFUSE_SECRET_KEY": self.secret_key,
            "LANGFUSE_HOST": self.base_url,
            "LANGFUSE_BASE_URL": self.base_url,
        }

    def reset(self) -> None:
        """Forget all stored data, logged requests, failures and faults; serve again if down."""
        with self._lock:
            self.state = State()
            self.requests.clear()
            self.validation_failures.clear()
            self._faults.clear()
        self.up()

    # ---- fault injection ------------------------------------------------------------------------
    def fail_next(self, path_prefix: str, status: int = 429, retry_after: int | None = 1, times: int = 1) -> None:
        """Answer the next `times` requests whose path starts with `path_prefix` with `status`.

        `retry_after` (whole seconds, the only form the SDK honours) is sent as a Retry-After header; None
        sends none. Faults are checked before routing and auth, and the failed requests are logged.
        """
        with self._lock:
            self._faults.append(_Fault(path_prefix, status, retry_after, times))

    def clear_faults(self) -> None:
        """Forget the injected failures not used up yet."""
        with self._lock:
            self._faults.clear()

    def down(self, status: int | None = None) -> None:
        """Take the server down: refuse connections (default), or answer every request with `status` (e.g. 503)."""
        if status is None:
            self._close_socket()
        else:
            self._down_status = status

    def up(self) -> None:
        """Serve again after down(), on the same port."""
        self._down_status = None
        if self.is_refusing:
            self.start()

    # ---- inspection -----------------------------------------------------------------------------
    def requests_to(
        self, path_prefix: str, *, method: str | None = None, status: int | None = None
    ) -> list[RecordedRequest]:
        """Return the logged requests under `path_prefix`, optionally of one method and answer status."""
        return [
            r
            for r in self.requests
            if r.path.startswith(path_prefix) and method in (None, r.method) and status in (None, r.status)
        ]

    def trace_as_dashboards_see_it(self, trace_id: str) -> dict[str, Any] | None:
        """A trace's tags, version and name as v4 dashboards read them: from its root span only."""
        with self._lock:
            return root_trace(self.state, trace_id)

    def widget_rows(self, name: str, **override: Any) -> list[dict[str, Any]]:
        """The rows the stored widget called `name` draws (v4 read path; see widgets.py); none: no data.

        `override` replaces parts of its query, e.g. `metrics=[{"measure": "count", "agg": "count"}]`.
        """
        with self._lock:
            found = [w for w in self.state.widgets.values() if w["name"] == name]
            assert len(found) == 1, f"{len(found)} widgets named {name!r}"
            return widget_rows(self.state, {**found[0], **override})

    # ---- dispatch -------------------------------------------------------------------------------
    def _auth_problem(self, headers: dict[str, str], path: str) -> dict[str, Any] | None:
        header = headers.get("authorization")
        if not header:
            if path.startswith("/api/public/unstable/"):  # recorded on v4.16: the newer routes add a code
                return {"message": "No authorization header", "code": "authentication_failed"}
            return {"message": "No authorization header"}
        scheme, _, token = header.partition(" ")
        try:
            user, _, password = base64.b64decode(token).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            user = password = ""
        if scheme.lower() == "basic" and (user, password) == (self.public_key, self.secret_key):
            return None
        body: dict[str, Any] = {"message": BAD_KEYS}
        if path.startswith("/api/public/v2/prompts"):
            body["error"] = "UnauthorizedError"
        return body

    def _take_fault(self, path: str) -> _Fault | None:
        for fault in self._faults:
            if fault.remaining > 0 and path.startswith(fault.path_prefix):
                fault.remaining -= 1
                return fault
        return None

    def _answer(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, params: dict[str, str]
    ) -> tuple[int, Any, dict[str, str], Any]:
        """Return (status, body, extra headers, parsed request body) for one request."""
        if self._down_status is not None:
            return self._down_status, {"message": "Service Unavailable"}, {}, None
        fault = self._take_fault(path)
        if fault is not None:
            retry = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            return fault.status, {"message": f"injected failure {fault.status}"}, retry, None
        found = None if path.startswith(self.missing_apis or ("\0",)) else route(path)
        if found is None:
            return 404, NOT_FOUND_PAGE, {}, None
        methods, args = found
        if method not in methods:
            return 405, {"message": "Method not allowed"}, {}, None
        auth = None if path == "/api/public/health" else self._auth_problem(headers, path)
        if auth is not None:
            return 401, auth, {}, None
        try:
            if headers.get("content-encoding") == "gzip":
                raw = gzip.decompress(raw)
            is_json = raw and "json" in headers.get("content-type", "") and "otel" not in path
            body: Any = js_numbers(json.loads(raw)) if is_json else None
        except (OSError, ValueError) as exc:  # a gzip stream or JSON text that does not decode
            return (*self._invalid(method, path, InvalidBody("request body", [str(exc)]), None), {}, None)
        call = Call(
            method, path, params, headers, body, raw, self.state, self.server_mode, self.public_key, self.server_version
        )
        try:
            status, answer = methods[method](call, *args)
        except InvalidBody as exc:
            status, answer = self._invalid(method, path, exc, body)
        except ApiProblem as exc:
            status, answer = exc.status, exc.body
        for rejected in call.rejected:
            self._record_failure(method, path, rejected, body)
        return status, answer, {}, body

    def _record_failure(self, method: str, path: str, exc: InvalidBody, body: Any) -> None:
        self.validation_failures.append(ValidationFailure(method, path, exc.model, exc.errors, body))

    def _invalid(self, method: str, path: str, exc: InvalidBody, body: Any) -> tuple[int, Any]:
        self._record_failure(method, path, exc, body)
        return 400, {
            "message": "Invalid request data",
            "error": [{"code": "custom", "path": [], "message": e} for e in exc.errors],
        }

    def handle(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Answer one HTTP request: returns (status, headers, payload) and logs it in `requests`."""
        split = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        with self._lock:
            status, answer, extra, body = self._answer(method, split.path, headers, raw, params)
            logged_headers = {**headers, "authorization": "<redacted>"} if "authorization" in headers else headers
            self.requests.append(RecordedRequest(method, split.path, params, logged_headers, body, status, answer))
        if isinstance(answer, str):
            return status, {**extra, "Content-Type": "text/html; charset=utf-8"}, answer.encode()
        return status, {**extra, "Content-Type": "application/json; charset=utf-8"}, json.dumps(answer).encode()


def default_generation() -> ServerMode:
    """The generation a FakeLangfuse is when the test does not say: $SCOREGATE_FAKE_LANGFUSE, default `new`."""
    chosen = os.environ.get(GENERATION_ENV, "new").strip() or "new"
    if chosen not in GENERATION_VERSIONS:
        raise ValueError(f"{GENERATION_ENV} must be old or new, not {chosen!r}")
    return "old" if chosen == "old" else "new"
