"""Langfuse's newer public endpoints (score configs, dashboards, annotation queues) called with httpx.

The same credentials as the SDK; one code path for SDK 4 and 5 (whose generated clients differ). A server
without one of these APIs answers its web 404 page: that becomes a clear `MissingApi` error naming the API,
the server's version (from /api/public/health) and the version known to have it; nothing else is affected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import LangfuseSettings, require_settings
from scoregate.integrations.langfuse.remote import HOST_HINT, KEYS_HINT
from scoregate.support.redaction import redact

KNOWN_GOOD_SERVER = "v4.16"
"""The Langfuse server version these endpoints were recorded against (shared/data/langfuse-recordings)."""
PAGE_LIMIT = 50


class MissingApi(ScoregateError):
    """The server (or its version) does not serve an API scoregate needs for one feature."""


class PublicApi:
    """A Langfuse project's public REST API over httpx, with errors a user can act on."""

    def __init__(self, settings: LangfuseSettings | None = None, *, timeout_s: float = 20) -> None:
        self.settings = settings or require_settings()
        self.host = self.settings.host
        self._http = httpx.Client(
            base_url=self.host, auth=(self.settings.public_key, self.settings.secret_key), timeout=timeout_s
        )
        self.requests = 0
        self._version: str | None = None

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def server_version(self) -> str:
        """The server's version from /api/public/health, or `unknown`."""
        if self._version is None:
            try:
                self._version = str(self._http.get("/api/public/health").json().get("version") or "unknown")
            except (httpx.HTTPError, ValueError, AttributeError):
                self._version = "unknown"
        return self._version

    def send(self, doing: str, method: str, path: str, **kwargs: Any) -> tuple[httpx.Response, Any]:
        """Send one request; return the response and its JSON body (None when it is not JSON), or raise the
        one-line error for a server that did not answer."""
        self.requests += 1
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise ScoregateError(f"Langfuse at {self.host} did not answer in time while {doing}") from None
        except httpx.HTTPError as exc:
            raise ScoregateError(
                f"cannot reach Langfuse at {self.host} while {doing}: {exc or type(exc).__name__}", hint=HOST_HINT
            ) from None
        try:
            return response, response.json()
        except ValueError:
            return response, None

    def call(self, feature: str, doing: str, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request and return its JSON answer; raise MissingApi or a ScoregateError saying what failed."""
        response, body = self.send(doing, method, path, **kwargs)
        if response.status_code in (401, 403):
            raise ScoregateError(
                f"Langfuse at {self.host} rejected the API keys (HTTP {response.status_code})", hint=KEYS_HINT
            )
        if response.status_code in (404, 405) and not isinstance(body, dict):
            raise MissingApi(
                f"Langfuse at {self.host} (server {self.server_version()}) has no {feature} API ({path.split('?')[0]})",
                hint=f"{feature} needs a Langfuse server that serves it (Langfuse {KNOWN_GOOD_SERVER} or newer does); "
                "everything else in scoregate works without it",
            )
        if response.status_code >= 400:
            message = body.get("message") if isinstance(body, dict) else redact(response.text)[:200]
            details = body.get("details") or body.get("error") if isinstance(body, dict) else None
            extra = f" {details}" if details else ""
            raise ScoregateError(f"Langfuse refused {doing} (HTTP {response.status_code}: {message}){extra}")
        return body

    def pages(self, feature: str, doing: str, path: str) -> Iterator[dict[str, Any]]:
        """Yield every row of a paginated list endpoint."""
        page = 1
        while True:
            answer = self.call(feature, doing, "GET", path, params={"page": page, "limit": PAGE_LIMIT})
            rows = answer.get("data") or []
            yield from rows
            total = (answer.get("meta") or {}).get("totalPages") or 0
            if not rows or page >= total:
                return
            page += 1

    def project_id(self) -> str:
        """The id of the project the keys open."""
        answer = self.call("projects", "reading the project", "GET", "/api/public/projects")
        data = answer.get("data") or []
        if not data:
            raise ScoregateError(f"Langfuse at {self.host} shows no project for these keys", hint=KEYS_HINT)
        return str(data[0]["id"])
