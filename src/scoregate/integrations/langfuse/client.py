"""Langfuse settings from the environment, the SDK client, and capture of what the SDK drops silently."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING

from scoregate.errors import ScoregateError

if TYPE_CHECKING:
    from langfuse import Langfuse

    SDK_VERSION: str
    SDK_MAJOR: int


@cache
def _sdk_version() -> str:
    from importlib.metadata import version

    return version("langfuse")


def __getattr__(name: str) -> object:
    """`SDK_VERSION` and `SDK_MAJOR` of the installed langfuse package, read on first use: looking a version up scans
    site-packages (~5 ms), which a run with Langfuse off does not need before its first request."""
    if name == "SDK_VERSION":
        return _sdk_version()
    if name == "SDK_MAJOR":
        return int(_sdk_version().split(".")[0])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


NOT_CONFIGURED = (
    "Langfuse is not configured: set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST (or LANGFUSE_BASE_URL)"
)


@dataclass(frozen=True)
class LangfuseSettings:
    """Where Langfuse is and the keys to it, read once from the environment."""

    public_key: str
    secret_key: str = field(repr=False)
    host: str

    @classmethod
    def from_env(cls) -> LangfuseSettings | None:
        """Return the settings when all three variables are set, else None (Langfuse steps are skipped)."""
        public = os.environ.get("LANGFUSE_PUBLIC_KEY", "").strip()
        secret = os.environ.get("LANGFUSE_SECRET_KEY", "").strip()
        host = (os.environ.get("LANGFUSE_BASE_URL") or os.environ.get("LANGFUSE_HOST") or "").strip()
        if not (public and secret and host):
            return None
        return cls(public_key=public, secret_key=secret, host=host.rstrip("/"))


def require_settings() -> LangfuseSettings:
    """Return the settings, or raise the error a Langfuse-only command shows when they are missing."""
    settings = LangfuseSettings.from_env()
    if settings is None:
        raise ScoregateError(NOT_CONFIGURED, hint="export the three variables (see docs/langfuse/index.md), then retry")
    return settings


def open_client(settings: LangfuseSettings, *, timeout_s: int = 20) -> Langfuse:
    """Return an SDK client for evaluation work: every trace sampled, no prompt-cache surprises."""
    from langfuse import Langfuse

    return Langfuse(
        public_key=settings.public_key,
        secret_key=settings.secret_key,
        host=settings.host,
        timeout=timeout_s,
        sample_rate=1.0,
        tracing_enabled=True,
    )


MAX_MESSAGES = 100


class SdkLogCapture(logging.Handler):
    """Collects the `langfuse` logger's warnings and errors: the only trace of data the SDK dropped."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []
        self._logger = logging.getLogger("langfuse")
        self._previous_propagate = self._logger.propagate
        self._previous_level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        """Keep one formatted line per warning or error."""
        line = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.levelno >= logging.WARNING and len(self.messages) < MAX_MESSAGES and line not in self.messages:
            self.messages.append(line)  # distinct lines only: an SDK that warns once per item must not fill memory

    def __enter__(self) -> SdkLogCapture:
        self._logger.addHandler(self)
        self._logger.propagate = False
        self._logger.setLevel(logging.WARNING)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._logger.removeHandler(self)
        self._logger.propagate = self._previous_propagate
        self._logger.setLevel(self._previous_level)
