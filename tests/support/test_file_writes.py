"""`replace_atomically` (every `--markdown FILE`, report and record write): a regular file is replaced whole, but a
path that is not one — a named pipe, a device such as /dev/stdout, a symbolic link — is written through, never
replaced by a regular file."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from scoregate.errors import ScoregateError
from scoregate.support.files import replace_atomically


def test_a_regular_file_is_replaced_only_when_the_write_ends(tmp_path: Path) -> None:
    path = tmp_path / "evidence.md"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), replace_atomically(path) as out:
        out.write("half")
        raise RuntimeError("the writer failed")
    assert path.read_text(encoding="utf-8") == "old\n"
    with replace_atomically(path) as out:
        out.write("new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["evidence.md"]


def test_a_named_pipe_receives_the_text_and_stays_a_pipe(tmp_path: Path) -> None:
    pipe = tmp_path / "evidence.fifo"
    os.mkfifo(pipe)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    with replace_atomically(pipe) as out:
        out.write("| gate | status |\n")
    reader.join(timeout=10)
    assert received == ["| gate | status |\n"]
    assert stat.S_ISFIFO(pipe.lstat().st_mode)


def test_a_symbolic_link_keeps_pointing_at_its_file_which_gets_the_text(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "evidence.md"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "evidence.md"
    link.symlink_to(target)
    with replace_atomically(link) as out:
        out.write("new\n")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text(encoding="utf-8") == "new\n"


def test_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ScoregateError, match="is a folder; name the file to write"), replace_atomically(tmp_path):
        pass
