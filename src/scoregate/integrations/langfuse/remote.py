"""The SDK's REST API as scoregate calls it: throttled, retried on 429/5xx, and with errors a user can act on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import LangfuseSettings, open_client
from scoregate.integrations.langfuse.throttle import RPM_ENV, Throttle, rpm_from_env
from scoregate.support.redaction import redact

if TYPE_CHECKING:
    from langfuse import Langfuse

T = TypeVar("T")
DEFAULT_RETRIES = 5
"""Retries of one request on 408/409/429/5xx; the SDK waits as Retry-After says (at most 60 s each)."""
KEYS_HINT = (
    "check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY: they must be API keys of a project on this host "
    "(Langfuse → Settings → API Keys)"
)
HOST_HINT = "LANGFUSE_HOST must be Langfuse's base URL, e.g. https://cloud.langfuse.com or http://localhost:3000"


@dataclass(frozen=True)
class ProjectInfo:
    """The Langfuse project the keys belong to."""

    id: str
    name: str
    organization: str | None


def path_part(name: str) -> str:
    """Quote a name for a URL path segment, slashes included (as the SDK does for prompt folders)."""
    return quote(name, safe="")


def _message(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error") or body)
    return redact(str(body))[:200]


def explain(exc: Exception, host: str, doing: str) -> ScoregateError | None:
    """Turn an SDK or transport failure into a ScoregateError saying what went wrong; None if not ours to explain."""
    from langfuse.api.core.api_error import ApiError

    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ScoregateError(f"LANGFUSE_HOST {host!r} is not a usable URL ({exc})", hint=HOST_HINT)
    if isinstance(exc, httpx.TimeoutException):
        return ScoregateError(
            f"Langfuse at {host} did not answer in time while {doing}",
            hint="check that the server is up and reachable from here, then retry",
        )
    if isinstance(exc, httpx.TransportError):
        return ScoregateError(
            f"cannot reach Langfuse at {host} while {doing}: {exc or type(exc).__name__}",
            hint=f"is the server up? is LANGFUSE_HOST right? {HOST_HINT}",
        )
    if isinstance(exc, ValidationError):
        return ScoregateError(
            f"{host} answered {doing} with data that is not Langfuse's API", hint=f"{HOST_HINT}, without /api"
        )
    if not isinstance(exc, ApiError):
        return None
    status, body = exc.status_code or 0, exc.body
    if status in (401, 403):
        return ScoregateError(
            f"Langfuse at {host} rejected the API keys (HTTP {status}: {_message(body)})", hint=KEYS_HINT
        )
    if not isinstance(body, dict | list):
        return ScoregateError(
            f"{host} does not answer like a Langfuse server (HTTP {status} while {doing})",
            hint=f"{HOST_HINT}, without /api",
        )
    if status == 429:
        return ScoregateError(
            f"Langfuse kept refusing requests for exceeding its rate limit while {doing}",
            hint=f"wait a minute and retry (the sync resumes where it stopped), or lower {RPM_ENV}",
        )
    if status >= 500:
        return ScoregateError(
            f"Langfuse at {host} is failing (HTTP {status}: {_message(body)}) while {doing}",
            hint="the server is down or overloaded; retry later (`scoregate langfuse check` tells when it is back)",
        )
    return ScoregateError(f"Langfuse refused {doing} (HTTP {status}: {_message(body)})")


def is_not_found(exc: BaseException) -> bool:
    """True for Langfuse's own JSON 404 (an unknown dataset or prompt), not a web server's HTML 404."""
    from langfuse.api import NotFoundError

    return isinstance(exc, NotFoundError) and isinstance(exc.body, dict)


class Remote:
    """One Langfuse project reached through the SDK: every request throttled, retried and explained."""

    def __init__(
        self,
        settings: LangfuseSettings,
        client: Langfuse | None = None,
        *,
        throttle: Throttle | None = None,
        max_retries: int = DEFAULT_RETRIES,
        timeout_s: int | None = None,
    ) -> None:
        self.settings = settings
        self.client = client if client is not None else open_client(settings)
        self.throttle = throttle if throttle is not None else Throttle(rpm_from_env())
        self.options: dict[str, Any] = {"max_retries": max_retries}
        if timeout_s is not None:
            self.options["timeout_in_seconds"] = timeout_s
        self.requests = 0
        """Requests sent (not counting the SDK's retries)."""

    @property
    def api(self) -> Any:
        """The SDK's low-level REST client (`langfuse.api`)."""
        return self.client.api

    def call(self, doing: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call one SDK API method after a throttle token; raise a ScoregateError naming `doing` on failure."""
        self.throttle.acquire()
        self.requests += 1
        try:
            return fn(*args, **kwargs, request_options=self.options)
        except Exception as exc:
            explained = explain(exc, self.settings.host, doing)
            if explained is None:
                raise
            raise explained from exc

    def find(self, doing: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """Like `call`, but return None when Langfuse answers that the thing does not exist."""
        try:
            return self.call(doing, fn, *args, **kwargs)
        except ScoregateError as exc:
            if exc.__cause__ is not None and is_not_found(exc.__cause__):
                return None
            raise

    def project(self) -> ProjectInfo:
        """Return the project the keys belong to; raise a clear error for a wrong host, wrong keys or a dead server."""
        projects = self.call("checking the API keys", self.api.projects.get)
        if not projects.data:
            raise ScoregateError(
                f"Langfuse at {self.settings.host} accepted the keys but shows no project for them",
                hint="use a project's API keys, not organization keys (Langfuse → project Settings → API Keys)",
            )
        first = projects.data[0]
        organization = getattr(first, "organization", None)
        return ProjectInfo(id=first.id, name=first.name, organization=getattr(organization, "name", None))
