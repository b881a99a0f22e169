"""The embedded local model server of a project (`scoregate model serve|stop|status`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.providers.local_server import ServerStatus


def local_model_port(root: Path) -> int:
    """The project's server port: SCOREGATE_LOCAL_PORT, else `settings.local_port` in scoregate.yaml, else 8765."""
    from scoregate.catalog.project import configured_local_port
    from scoregate.providers.local_server import local_port

    return local_port(configured_local_port(root))


def serve_local_model(root: Path) -> ServerStatus:
    """Start the project's local model server in the background and wait until it answers."""
    from scoregate.providers import local_server

    return local_server.serve(root, port=local_model_port(root))


def stop_local_model(root: Path) -> bool:
    """Stop the project's local model server; False when it was not running."""
    from scoregate.providers import local_server

    return local_server.stop(root, port=local_model_port(root))


def local_model_status(root: Path, *, timeout_s: float | None = None) -> ServerStatus:
    """Whether the project's local model server runs and answers (waiting `timeout_s`, default 5 s, for it)."""
    from scoregate.providers import local_server

    wait = local_server.HEALTH_TIMEOUT_S if timeout_s is None else timeout_s
    return local_server.status(root, port=local_model_port(root), timeout_s=wait)
