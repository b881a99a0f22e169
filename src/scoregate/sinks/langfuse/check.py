"""`scoregate langfuse check`: is Langfuse reachable, are the keys valid, which project do they open."""

from __future__ import annotations

import time
from dataclasses import dataclass

from scoregate.sinks.langfuse.client import SDK_VERSION, LangfuseSettings, require_settings
from scoregate.sinks.langfuse.remote import Remote
from scoregate.sinks.langfuse.throttle import Throttle

CHECK_TIMEOUT_S = 10


@dataclass(frozen=True)
class CheckReport:
    """What a successful check found."""

    host: str
    project_id: str
    project_name: str
    organization: str | None
    sdk_version: str
    latency_ms: float


def check_connection(settings: LangfuseSettings | None = None, *, remote: Remote | None = None) -> CheckReport:
    """Return the project the configured keys open; raise ScoregateError for a wrong host, wrong keys or a down server.

    One request, not retried: a check reports the server as it is now.
    """
    settings = settings or require_settings()
    remote = remote or Remote(settings, throttle=Throttle(0), max_retries=0, timeout_s=CHECK_TIMEOUT_S)
    started = time.perf_counter()
    project = remote.project()
    return CheckReport(
        host=settings.host,
        project_id=project.id,
        project_name=project.name,
        organization=project.organization,
        sdk_version=SDK_VERSION,
        latency_ms=(time.perf_counter() - started) * 1000,
    )
