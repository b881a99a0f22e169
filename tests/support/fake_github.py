"""A loopback fake of the GitHub REST API's issue comments: list (paged), create, edit; a real HTTP server.

Enough for the PR-evidence posting script (examples/pr-evidence/post_evidence.py). It checks what GitHub
checks that the script could get wrong: the bearer token, a JSON body with a string `body` of at most 65,536
characters (422 otherwise), and the repository and pull request it knows (404 otherwise).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from support.loopback_http import LoopbackHTTPServer

BODY_LIMIT = 65_536


@dataclass
class FakeGitHub:
    """The server and what it holds: comments per pull request, and every request it was sent."""

    repo: str = "acme/prompts"
    pr: int = 7
    token: str = "ghs_test_token"
    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                fake.requests.append((self.command, self.path))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._send(401, {"message": "Bad credentials"})
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if "/".join(parts[1:3]) != fake.repo or parts[0] != "repos" or parts[3] != "issues":
                    return self._send(404, {"message": "Not Found"})
                payload = None
                if self.command in ("POST", "PATCH"):
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    payload = json.loads(raw or b"null")
                    if not isinstance(payload, dict) or not isinstance(payload.get("body"), str):
                        return self._send(422, {"message": "body is required"})
                    if len(payload["body"]) > BODY_LIMIT:
                        return self._send(422, {"message": "Body is too long (maximum is 65536 characters)"})
                if parts[4:] == [str(fake.pr), "comments"] and self.command == "GET":
                    query = parse_qs(url.query)
                    size, page = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
                    return self._send(200, fake.comments[(page - 1) * size : page * size])
                if parts[4:] == [str(fake.pr), "comments"] and self.command == "POST" and payload is not None:
                    return self._send(201, fake.add(payload["body"]))
                if parts[4] == "comments" and self.command == "PATCH" and payload is not None:
                    found = [c for c in fake.comments if str(c["id"]) == parts[5]]
                    if not found:
                        return self._send(404, {"message": "Not Found"})
                    found[0]["body"] = payload["body"]
                    return self._send(200, found[0])
                return self._send(404, {"message": "Not Found"})

            do_GET = do_POST = do_PATCH = _handle

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The API's base URL (what GITHUB_API_URL holds on GitHub)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, text: str, user: str = "github-actions[bot]") -> dict[str, Any]:
        """Add a comment as a user would, and return it."""
        number = 1000 + len(self.comments)
        comment = {"id": number, "body": text, "user": {"login": user},
                   "html_url": f"https://github.com/{self.repo}/pull/{self.pr}#issuecomment-{number}"}  # fmt: skip
        self.comments.append(comment)
        return comment

    def close(self) -> None:
        """Stop the server."""
        self.server.shutdown()
        self.server.server_close()
