"""Read a user's text file strictly as UTF-8: a byte that is not is reported as `file:line`, never decoded away."""

from __future__ import annotations

from pathlib import Path

from scoregate.errors import ScoregateError


def not_utf8(path: Path, data: bytes, error: UnicodeDecodeError) -> str:
    """Return `file:line: not UTF-8 ...` for the first undecodable byte of `data`."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    byte = data[error.start : error.start + 1].hex()
    return f"{path}:{line}: not UTF-8 (byte 0x{byte} at column {column}); save the file as UTF-8"


def read_text_strict(path: Path) -> str:
    """Read a UTF-8 file; raise ScoregateError naming file:line at the first byte that is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScoregateError(f"cannot read: {exc.strerror}", where=str(path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScoregateError(not_utf8(path, data, exc)) from None
