"""The embedded local model server of a project (`scoregate model serve|stop|status`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoregate.providers.local_server import ServerStatus


class LocalModel:
    """The project's local model server: started in the background, stopped, asked whether it answers."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def port(self) -> int:
        """The server's port: SCOREGATE_LOCAL_PORT, else `settings.local_port` in scoregate.yaml, else 8765."""
        from scoregate.catalog.project import configured_local_port
        from scoregate.providers.local_server import local_port

        return local_port(configured_local_port(self.root))

    def serve(self) -> ServerStatus:
        """Start the server in the background and wait until it answers."""
        from scoregate.providers import local_server

        return local_server.serve(self.root, port=self.port)

    def stop(self) -> bool:
        """Stop the server; False when it was not running."""
        from scoregate.providers import local_server

        return local_server.stop(self.root, port=self.port)

    def status(self, *, timeout_s: float | None = None) -> ServerStatus:
        """Whether the server runs and answers (waiting `timeout_s`, default 5 s, for it)."""
        from scoregate.providers import local_server

        wait = local_server.HEALTH_TIMEOUT_S if timeout_s is None else timeout_s
        return local_server.status(self.root, port=self.port, timeout_s=wait)
