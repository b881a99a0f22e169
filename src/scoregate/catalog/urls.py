"""Check an endpoint URL (`base_url`, `OPENAI_BASE_URL`, `--base-url`) before any connection is tried."""

from __future__ import annotations

from urllib.parse import urlsplit

from scoregate.errors import ScoregateError


def url_problem(url: str) -> str | None:
    """Return why `url` is not an http(s) endpoint URL (scheme, host, port 1-65535), or None when it is one."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:  # a port that is not a number, or out of range
        return f"{url!r} is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1"
    if port == 0:
        return f"{url!r} has port 0; use a port from 1 to 65535"
    return None


def check_url(url: str, *, where: str) -> str:
    """Return `url` when it is an http(s) endpoint URL; else raise ScoregateError naming `where`."""
    problem = url_problem(url)
    if problem is not None:
        raise ScoregateError(problem, where=where, hint="give the server's base URL, e.g. http://HOST:8000/v1")
    return url
