"""Write a user file all at once: the old content stays until the new one is complete."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from scoregate.errors import ScoregateError


def check_writable_path(path: Path) -> None:
    """Raise a ScoregateError naming `path` when no file can be written there: it is a folder, or a folder on its
    way is a file (what `replace_atomically` would refuse, checked before any work is spent)."""
    if path.is_dir():
        raise ScoregateError("is a folder; name the file to write", where=str(path))
    for folder in path.parents:
        if folder.is_dir():
            return
        if folder.exists() or folder.is_symlink():
            raise ScoregateError(
                f"cannot write: {folder} is a file, not a folder", where=str(path), hint="name a file in a folder"
            )


def refuse_foreign_file(path: Path, start: str, what: str, hint: str) -> None:
    """Raise a ScoregateError when `path` is a file that is not empty and does not start with `start` (case aside):
    it is not the `what` a command writes there, and replacing it would lose someone's file."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        head = handle.read(len(start.encode()))
    if head and head.lower() != start.encode().lower():
        raise ScoregateError(f"exists and is not {what}, so it is not replaced", where=str(path), hint=hint)


@contextlib.contextmanager
def replace_atomically(path: Path) -> Iterator[TextIO]:
    """Yield a text handle whose content replaces `path` only when the block ends without an error.

    A failure while writing (a bad input line, a full disk) leaves the old file as it was; a path that cannot
    be written (a folder, no permission) is a ScoregateError naming it. A symbolic link stays one (its file is
    replaced), and a path that is not a regular file (a pipe, /dev/stdout) is written through, never replaced.
    """
    check_writable_path(path)
    if path.is_symlink():
        path = path.resolve()
    if path.exists() and not path.is_file():
        with _written_through(path) as handle:
            yield handle
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = partial.open("w", encoding="utf-8")
    except OSError as exc:
        raise ScoregateError(f"cannot write: {exc.strerror}", where=str(path)) from None
    try:
        with handle:
            yield handle
        os.replace(partial, path)
    except OSError as exc:
        raise ScoregateError(f"cannot write: {exc.strerror}", where=str(path)) from None
    finally:
        partial.unlink(missing_ok=True)


@contextlib.contextmanager
def _written_through(path: Path) -> Iterator[TextIO]:
    """Yield a handle writing straight into a path that is not a regular file (a pipe, a device)."""
    try:
        handle = path.open("w", encoding="utf-8")
    except OSError as exc:
        raise ScoregateError(f"cannot write: {exc.strerror}", where=str(path)) from None
    try:
        with handle:
            yield handle
    except OSError as exc:
        raise ScoregateError(f"cannot write: {exc.strerror}", where=str(path)) from None
