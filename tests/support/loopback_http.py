"""A threaded HTTP server for test doubles that stays quiet when a client vanishes mid-request."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any

CLIENT_GONE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class LoopbackHTTPServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` on daemon threads that ignores a connection its client dropped.

    Tests kill scoregate with SIGKILL mid-request; the standard server then prints the reset's traceback to
    stderr, where it lands in whatever output the test captures next. Any other handler error still prints.
    """

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Skip a reset or broken connection; report anything else as the standard server does."""
        if isinstance(sys.exc_info()[1], CLIENT_GONE):
            return
        super().handle_error(request, client_address)
