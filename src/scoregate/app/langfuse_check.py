"""`scoregate langfuse check`: is Langfuse reachable, are the keys valid, which project do they open, which
server generation answers and how scoregate will write to it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from scoregate.errors import ScoregateError
from scoregate.integrations.langfuse.client import SDK_VERSION, LangfuseSettings, require_settings
from scoregate.integrations.langfuse.remote import HOST_HINT, Remote
from scoregate.integrations.langfuse.server_generation import ServerGeneration, read_generation
from scoregate.integrations.langfuse.throttle import Throttle

CONNECT_TIMEOUT_S = 3.0
CHECK_TIMEOUT_S = 5


@dataclass(frozen=True)
class CheckReport:
    """What a successful check found."""

    host: str
    project_id: str
    project_name: str
    organization: str | None
    sdk_version: str
    latency_ms: float
    server: ServerGeneration
    """The server's generation: its version, and how scoregate sends scores to it."""


def check_connection(settings: LangfuseSettings | None = None, *, remote: Remote | None = None) -> CheckReport:
    """Return the project the configured keys open and the server's generation; raise ScoregateError for a wrong
    host, wrong keys, a down server or a server too old for scoregate (ServerTooOld, with the fix).

    Not retried: a check reports the server as it is now.
    """
    settings = settings or require_settings()
    started = time.perf_counter()
    if remote is None:
        probe_host(settings.host)
        remote = Remote(settings, throttle=Throttle(0), max_retries=0, timeout_s=CHECK_TIMEOUT_S)
    project = remote.project()
    try:
        server = read_generation(settings, timeout_s=CHECK_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise ScoregateError(
            f"Langfuse at {settings.host} stopped answering while its version was read: {exc or type(exc).__name__}",
            hint="retry; `scoregate langfuse check` reports the server as it is now",
        ) from None
    return CheckReport(
        host=settings.host,
        project_id=project.id,
        project_name=project.name,
        organization=project.organization,
        sdk_version=SDK_VERSION,
        latency_ms=(time.perf_counter() - started) * 1000,
        server=server,
    )


def probe_host(host: str) -> None:
    """Fail fast when nothing answers HTTP at `host`: a short connect timeout, then a short answer timeout.

    Without it a server that is down behind a firewall (or hung) kept `langfuse check` waiting 16-26 s.
    """
    timeout = httpx.Timeout(CHECK_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        httpx.get(f"{host}/api/public/health", timeout=timeout)
    except httpx.ConnectTimeout:
        raise ScoregateError(
            f"cannot connect to Langfuse at {host}: no connection within {CONNECT_TIMEOUT_S:.0f} s",
            hint=f"is the server up and reachable from here (VPN, firewall)? {HOST_HINT}",
        ) from None
    except httpx.TimeoutException:
        raise ScoregateError(
            f"Langfuse at {host} accepted the connection but did not answer within {CHECK_TIMEOUT_S} s",
            hint="the server is hung or overloaded; check it, then retry",
        ) from None
    except httpx.HTTPError:  # refused, a bad URL, ...: the real request below says exactly what
        return
