"""Write a user file all at once: the old content stays until the new one is complete."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from scoregate.errors import ScoregateError


@contextlib.contextmanager
def replace_atomically(path: Path) -> Iterator[TextIO]:
    """Yield a text handle whose content replaces `path` only when the block ends without an error.

    A failure while writing (a bad input line, a full disk) leaves the old file as it was; a path that cannot
    be written (a folder, no permission) is a ScoregateError naming it.
    """
    if path.is_dir():
        raise ScoregateError("is a folder; name the file to write", where=str(path))
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
