"""A threaded HTTP server for test doubles that answers at once and stays quiet when a client vanishes mid-request."""

from __future__ import annotations

import socket
import sys
from http.server import ThreadingHTTPServer
from typing import Any

CLIENT_GONE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class LoopbackHTTPServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` on daemon threads that sends each reply at once and ignores a connection its client
    dropped.

    Tests kill scoregate with SIGKILL mid-request; the standard server then prints the reset's traceback to
    stderr, where it lands in whatever output the test captures next. Any other handler error still prints.
    """

    daemon_threads = True

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept a connection with Nagle's algorithm off, as production servers do: a reply's headers and body go
        out in two writes, and with it on the body waits for the client's delayed ACK (40 ms) on every request."""
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Skip a reset or broken connection; report anything else as the standard server does."""
        if isinstance(sys.exc_info()[1], CLIENT_GONE):
            return
        super().handle_error(request, client_address)
